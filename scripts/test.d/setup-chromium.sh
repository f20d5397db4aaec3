# Sourced by scripts/test before `cargo test`: headless Chromium (Debian's chromium package)
# for blanket-server's status page screenshot test; exports BLANKET_CHROMIUM. If it cannot be
# installed, the screenshot test skips with a loud message (the page's HTML is still tested).

blanket_chromium_setup() {
    local bin
    bin="$(command -v chromium || command -v chromium-browser || true)"
    if [ -z "${bin}" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "setup-chromium: installing Debian's chromium" >&2
        apt-get update -qq >&2 || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
            --no-install-recommends chromium fonts-dejavu-core >&2 || true
        bin="$(command -v chromium || true)"
    fi
    if [ -z "${bin}" ]; then
        echo "!!! setup-chromium: chromium is not installed and cannot be: the status page screenshot test will SKIP" >&2
        return 0
    fi
    export BLANKET_CHROMIUM="${bin}"
    echo "setup-chromium: ${bin} (BLANKET_CHROMIUM)" >&2
}
blanket_chromium_setup
