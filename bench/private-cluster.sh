# Sourced by the bench scripts that need PostgreSQL settings of their own (logging every statement, a preloaded
# library): `private_cluster NAME` starts a throwaway cluster in a new directory under /tmp, with the settings read
# from standard input appended to its postgresql.conf, listening on a free loopback port, and stops and removes it
# when the script exits. It sets `bin` (PostgreSQL's programs), `port`, `cluster` (the directory; its data in
# `$cluster/data`), `as_owner` (runs a command as the cluster's owner) and `psql` (to the cluster, unaligned and quiet).
private_cluster() {
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  cluster=$(mktemp -d "/tmp/envbench-$1.XXXXXX")
  chmod 755 "$cluster"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  as_owner() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
  psql() { "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -qAtX "$@"; }
  trap 'as_owner "$bin/pg_ctl" -D "$cluster/data" -m immediate -w stop >/dev/null 2>&1 || true; rm -rf "$cluster"' EXIT
  mkdir "$cluster/data"
  if [ "$(id -u)" = 0 ]; then chown postgres "$cluster" "$cluster/data"; fi
  as_owner "$bin/initdb" -D "$cluster/data" -A trust -U postgres --no-sync >/dev/null
  {
    echo "port = $port"
    echo "listen_addresses = '127.0.0.1'"
    echo "unix_socket_directories = '$cluster/data'"
    cat
  } >> "$cluster/data/postgresql.conf"
  as_owner "$bin/pg_ctl" -D "$cluster/data" -l "$cluster/server.log" -w start >/dev/null
}
