#!/bin/sh
# `pip install .` on a fresh machine: a Debian bookworm root made by debootstrap with
# only Python, pip, venv, gcc and git, plus the Rust toolchain copied in (rustup's
# stable, no cargo registry cache, no target directory, no virtualenv of ours). It
# clones the repository into the root, runs `pip install .` in a new virtualenv and
# then the README's Python example. Needs root (chroot), debootstrap and the
# registries (Debian, PyPI, crates.io). Not part of .ci/run: it takes a release
# build of the whole package (about 15 minutes on 2 cores). Method and the last
# figures: docs/python.md, "Installing on a fresh machine".
#
# usage: tests/fresh-machine/run.sh [ROOT]   (default /tmp/sparring-fresh; reused if it exists)
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
root=${1:-/tmp/sparring-fresh}
if [ ! -x "$root/usr/bin/python3" ]; then
    debootstrap --variant=minbase \
        --include=python3,python3-venv,python3-pip,gcc,libc6-dev,git,ca-certificates \
        bookworm "$root" http://deb.debian.org/debian
fi
toolchain=$(rustup toolchain list | awk '/default/ {print $1}')
mkdir -p "$root/root/.rustup/toolchains" "$root/root/.cargo"
[ -d "$root/root/.rustup/toolchains/$toolchain" ] ||
    cp -a "$(rustup toolchain list -v | awk '/default/ {print $NF}')" "$root/root/.rustup/toolchains/"
printf 'version = "12"\ndefault_toolchain = "%s"\nprofile = "default"\n' "$toolchain" \
    > "$root/root/.rustup/settings.toml"
rm -rf "$root/root/.cargo/bin" "$root/root/.cargo/registry" "$root/src" "$root/venv"
cp -a "$(dirname "$(command -v cargo)")" "$root/root/.cargo/bin"
# The machine's network settings (resolver, the proxy's certificate bundle), not the project's.
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
git clone -q "$repo" "$root/src/sparring"
mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
trap 'umount "$root/proc" 2>/dev/null || true' EXIT
env -i HOME=/root PATH=/root/.cargo/bin:/usr/bin:/bin \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    /usr/sbin/chroot "$root" /bin/sh -euc '
        python3 --version; cargo --version; cc --version | head -1
        python3 -m venv /venv
        cd /src/sparring
        start=$(date +%s)
        /venv/bin/pip install --quiet .
        echo "pip install . took $(( $(date +%s) - start )) s"
        cd /
        awk "/^\`\`\`python/{f=1;next} /^\`\`\`/{f=0} f" /src/sparring/README.md > /tmp/readme_example.py
        /venv/bin/python /tmp/readme_example.py
        /venv/bin/python -c "import sparring; print(\"installed\", sparring.__name__, sparring.__file__)"
    '
