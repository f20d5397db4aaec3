# Sourced by scripts/test before `cargo test`: a throw-away PostgreSQL cluster on loopback for
# blanket-server's replica tests (two shufflers and two analyzers on one database). Installs
# Debian's postgresql if missing, starts a cluster as the unprivileged `postgres` user (or as
# the current user when not root), and exports BLANKET_TEST_PG_URL. The cluster is stopped and
# deleted when scripts/test exits. If PostgreSQL cannot start, the replica tests skip with a
# loud message (they read BLANKET_TEST_PG_URL).

blanket_pg_setup() {
    local bindir
    bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    if [ -z "${bindir}" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "setup-postgres: installing Debian's postgresql" >&2
        apt-get update -qq >&2 || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
            postgresql >&2 || true
        bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    fi
    if [ -z "${bindir}" ]; then
        echo "!!! setup-postgres: PostgreSQL is not installed and cannot be: the PostgreSQL replica tests will SKIP" >&2
        return 0
    fi
    local dir run_as=()
    dir="$(mktemp -d "${TMPDIR:-/tmp}/blanket-pg.XXXXXX")"
    if [ "$(id -u)" = 0 ]; then
        if ! id postgres >/dev/null 2>&1; then
            echo "!!! setup-postgres: no postgres user: the PostgreSQL replica tests will SKIP" >&2
            return 0
        fi
        chown postgres "${dir}"
        run_as=(runuser -u postgres --)
    fi
    if ! "${run_as[@]}" "${bindir}/initdb" -D "${dir}/data" -U blanket --auth=trust -E UTF8 \
        >"${dir}/initdb.log" 2>&1; then
        echo "!!! setup-postgres: initdb failed (${dir}/initdb.log): the PostgreSQL replica tests will SKIP" >&2
        return 0
    fi
    local port started=""
    for port in 54329 54339 54349 54359 54369; do
        if "${run_as[@]}" "${bindir}/pg_ctl" -D "${dir}/data" -l "${dir}/server.log" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c max_connections=200" \
            start >/dev/null 2>&1; then
            started=1
            break
        fi
    done
    if [ -z "${started}" ]; then
        echo "!!! setup-postgres: the cluster did not start (${dir}/server.log): the PostgreSQL replica tests will SKIP" >&2
        return 0
    fi
    export BLANKET_TEST_PG_URL="postgres://blanket@127.0.0.1:${port}/postgres"
    BLANKET_PG_STOP="${run_as[*]} ${bindir}/pg_ctl -D ${dir}/data -m fast stop >/dev/null 2>&1; rm -rf ${dir}"
    # shellcheck disable=SC2064
    trap "${BLANKET_PG_STOP}" EXIT
    echo "setup-postgres: PostgreSQL on 127.0.0.1:${port} (BLANKET_TEST_PG_URL)" >&2
}
blanket_pg_setup
