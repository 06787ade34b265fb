#!/bin/sh
# compare.sh: hwcoll against BookSim2, per delivered packet, on one core
# each, interleaved (make booksim; docs/performance.md, "Against BookSim2").
#
#   BOOKSIM=path/to/booksim2/src/booksim bench/booksim/compare.sh [rounds]
#
# HWCOLL names the hwcoll binary (default: bin/hwcoll, built by make build
# with the profile). Each round runs, for the 256-node fat-tree and the
# 8x8 torus, BookSim2's config beside this script and then hwcoll's
# (configs/fattree-unicast.yaml with 8-port switches,
# configs/torus-uniform.yaml), and prints each side's wall time per
# delivered packet and their ratio; the last lines give each network's
# median ratio. The work is counted per packet, not per hop: the two
# count hops differently.
#
# BookSim2 prints no count of delivered packets. Its accepted packet
# rate is per node and cycle over the sample periods, in which the
# network is in steady state; the packets still in flight when injection
# stops are all delivered in its drain. So
#   delivered = rate * nodes * periods * sample_period + in_flight_flits / packet_size
# and its wall time is the whole process's (its build of the network is
# a small part).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=${1:-3}
case $rounds in '' | *[!0-9]* | 0)
	echo "compare.sh: rounds must be a positive integer, not '$rounds'" >&2
	exit 2 ;;
esac
bs=${BOOKSIM:-}
if [ -z "$bs" ] || [ ! -x "$bs" ]; then
	echo "compare.sh: BOOKSIM must name a BookSim2 binary (git clone https://github.com/booksim/booksim2 && make -C booksim2/src), not '$bs'" >&2
	exit 2
fi
hw=${HWCOLL:-$root/bin/hwcoll}
if [ ! -x "$hw" ]; then
	echo "compare.sh: HWCOLL must name a hwcoll binary (make build writes bin/hwcoll), not '$hw'" >&2
	exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }

# booksim CFG NODES: prints "seconds packets"; BookSim2 exits 255 when
# its run succeeds, so success is its "Time taken" line.
booksim() {
	t0=$(now)
	"$bs" "$1" >"$tmp/bs.out" 2>&1
	t1=$(now)
	awk -v t0="$t0" -v t1="$t1" -v nodes="$2" -v cfg="$1" '
		FNR == NR { sub(/\/\/.*/, ""); n = split($0, kv, /[=;]/)
			for (i = 1; i + 1 <= n; i += 2) { k = kv[i]; v = kv[i+1]; gsub(/[ \t]/, "", k); gsub(/[ \t]/, "", v); if (k != "") p[k] = v }
			next }
		/^Time taken is/ { cyc = $4 }
		/^throughput change/ { periods++ }
		/^Total in-flight flits =/ { infl = $5 }
		/^Accepted packet rate average =/ && /samples/ { rate = $6 }
		END {
			if (cyc == "" || rate == "") { print "compare.sh: BookSim2 printed no statistics for " cfg > "/dev/stderr"; exit 1 }
			printf "%.3f %.0f\n", t1 - t0, rate * nodes * periods * p["sample_period"] + infl / p["packet_size"]
		}' "$1" "$tmp/bs.out"
}

# hwcoll CONFIG CYCLES SET...: prints "seconds packets" of the run alone.
hwcoll() {
	cfg=$1 cyc=$2
	shift 2
	GOMAXPROCS=1 "$hw" run --config "$cfg" --json --set run.workers=1 --set run.warmup_cycles=0 \
		--set run.measure_cycles="$cyc" --set run.max_cycles=$((cyc * 4)) "$@" >"$tmp/hw.json" || exit 1
	tr ',' '\n' <"$tmp/hw.json" | awk -F: '
		$1 == "\"wall_seconds\"" { w = $2 } $1 == "\"packets_delivered\"" { d = $2 }
		END { if (w == "" || d + 0 == 0) { print "compare.sh: hwcoll reported no delivered packets" > "/dev/stderr"; exit 1 }
			printf "%s %s\n", w, d }'
}

# row ROUND NET BS HW: one round's line; the ratio goes to NET's list.
row() {
	set -- "$1" "$2" $3 $4
	echo "$1 $2 $3 $4 $5 $6" | awk '{ b = 1e6 * $3 / $4; h = 1e6 * $5 / $6
		printf "round %s %-10s BookSim2 %7.2f us a packet (%.0f packets)  hwcoll %6.3f us (%.0f)  ratio %5.1fx\n", $1, $2, b, $4, h, $6, b / h }'
	echo "$1 $2 $3 $4 $5 $6" | awk '{ printf "%.3f\n", ($3 / $4) / ($5 / $6) }' >>"$tmp/$2.ratios"
}

for r in $(seq "$rounds"); do
	b=$(booksim "$here/fattree256.cfg" 256) || exit 1
	h=$(hwcoll "$root/configs/fattree-unicast.yaml" 300000 --set network.ports=8) || exit 1
	row "$r" fattree256 "$b" "$h"
	b=$(booksim "$here/torus8x8.cfg" 64) || exit 1
	h=$(hwcoll "$root/configs/torus-uniform.yaml" 600000) || exit 1
	row "$r" torus8x8 "$b" "$h"
done
for n in fattree256 torus8x8; do
	sort -n "$tmp/$n.ratios" | awk -v n="$n" '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%-10s median ratio %.1fx over %d rounds (%.1f-%.1fx)\n", n, m, NR, v[1], v[NR] }'
done
