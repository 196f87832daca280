#!/bin/sh
# Regenerates the data and PNG of the DPDS paper's Section IV figures with linkem-sim.
#
#   scripts/sim/plot.sh [OUTDIR] [extra linkem-sim flags, e.g. --jobs 2 --paper-durations]
#
# Writes OUTDIR/figN.csv and OUTDIR/figN.png for fig1 fig3 ... fig11 (default OUTDIR:
# sim-figures). fig3/fig4 and fig9/fig10 share one grid: each pair is simulated once and the
# second figure re-plotted from the first one's CSV. LINKEM_SIM (default: linkem-sim on PATH,
# else build-sim/backend/sim/linkem-sim) selects the binary.
set -eu
out=${1:-sim-figures}
[ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")/../.." && pwd)
sim=${LINKEM_SIM:-$(command -v linkem-sim || echo "$here/build-sim/backend/sim/linkem-sim")}
mkdir -p "$out"
for fig in fig1 fig3 fig5 fig6 fig7 fig8 fig9 fig11; do
    "$sim" --sweep "$fig" --csv "$out/$fig.csv" --plot "$out/$fig.png" "$@"
done
"$sim" --sweep fig4 --from-csv "$out/fig3.csv" --plot "$out/fig4.png"
"$sim" --sweep fig10 --from-csv "$out/fig9.csv" --plot "$out/fig10.png"
echo "plot.sh: figures in $out"
