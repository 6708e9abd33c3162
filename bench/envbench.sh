# Sourced by the bench scripts, from the repository's root: the envbench binary they run, $ENVBENCH, or when it is
# not set this tree's release build (built first; its target directory the one .ci/run reuses unless
# CARGO_TARGET_DIR says otherwise).
if [ -z "${ENVBENCH:-}" ]; then
  export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/envbench-target}
  cargo build --quiet --release -p envbench
  ENVBENCH="$CARGO_TARGET_DIR/release/envbench"
fi
