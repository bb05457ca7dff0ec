# Sourced by the bench scripts: sets SCALELAB to the scalelab binary to
# measure. A prebuilt one named in $SCALELAB is used as it is (so nothing
# compiles under the bench lock); otherwise the release build of this
# checkout is made first, at low priority.
# shellcheck shell=bash
scalelab_bin_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -z "${SCALELAB:-}" ]; then
    echo "building scalelab (release)..." >&2
    (cd "$scalelab_bin_root" && nice -n 19 cargo build --release --quiet)
    SCALELAB=$scalelab_bin_root/target/release/scalelab
fi
[ -x "$SCALELAB" ] || { echo "SCALELAB=$SCALELAB is not an executable" >&2; exit 1; }
