#!/bin/bash
# emitted_variants.sh SRC DIR TAG: appends to DIR/emitted_variants.cuh (for
# scripts/gpu/rows_emitted_probe.cu) the kernel of SRC, tessel's emitted CUDA of layernorm_auto with
# the row in registers (`tessel compile examples/kernels/layernorm_auto.tir --size-hint M=..,N=..
# --emit=cuda`), as emitted and in edited copies, one habit of the emitted code changed each (a
# probe, not product code). Each copy's kernel is named ln_TAG_<variant>; the list macro
# EMITTED_VARIANTS(V) names them with their block size: V(kernel, threads). The first call (no
# header yet) writes the header's preamble.
#   emitted     as emitted
#   regonly     the general (several tiles a row) path dropped: row_in_registers = true
#   colplain    weight and bias by the guarded asm load of the row (ld.global, not .nc)
#   colsel      weight and bias by a plain 16-byte load under a select (ok ? *p : 0)
#   colhalf     weight and bias in the row-in-registers path by two 8-byte loads a chunk (what
#               the emitter does since call E of 2026-11-29-rows-emitted-h200.md)
#   ghalf       the same for the weight only (the bias by one 16-byte load)
#   col16       the emitter's 8-byte halves joined back into one 16-byte read-only fetch
#   rsqrt       the statistics' 1 / sqrtf by rsqrtf (MUFU.RSQ, no IEEE slow path)
#   nofull      the stores without their full-tile version (only the guarded store)
#   nopdl       no griddepcontrol.wait
#   rot         every thread's columns rotated by the row's 16-byte vectors past its 128-byte line
#               (the first `head` threads of each block-wide chunk take the chunk's last vectors),
#               so that each warp's row loads and stores cover whole lines where rows start inside
#               one (N = 32760); the weight and bias then sit off their lines instead
# (Calls A and B of the second 2026-11-29 session also had the row's loads under a select, the
# stores without their full-tile version and the statistics by __fdividef / rsqrtf, on the
# kernel before call E: each spilled more and ran 10-60% slower.) An edit that changes nothing is
# left out with a message.
set -eu
src=$1 dir=$2 tag=$3
threads=$(grep -o "Block: [0-9]* threads" $src | grep -o "[0-9]*")
mkdir -p $dir
k=$dir/emitted_kernels.cuh
if [ ! -f $k ]; then
  cat > $k <<'H'
#pragma once
#include "tessel_device.cuh"
#include "emitted_support.cuh"
template <int W>
__device__ __forceinline__ tsl_raw16<W> sel_fetch16(const unsigned short* p, bool ok,
                                                     unsigned fill = 0u) {
  static_assert(W == 8, "16-byte fetches only");
  tsl_raw16<W> r;
  const uint4 u = ok ? *reinterpret_cast<const uint4*>(p) : make_uint4(fill, fill, fill, fill);
  r.w[0] = u.x; r.w[1] = u.y; r.w[2] = u.z; r.w[3] = u.w;
  return r;
}
H
  : > $dir/variants.list
fi
list=""
body() { grep -v '^#include' $src | sed -e "s/\blayernorm_auto(/ln_${tag}_$1(/"; }
# Appends the edited copy ($1: its name; the rest: the edit's command) unless the edit changes
# nothing (the emitted code already has the habit, or not the construct), which it says.
add_edited() {
  local name=$1; shift
  local edited
  edited=$(body $name | "$@")
  if [ "$edited" = "$(body $name)" ] && [ $name != emitted ]; then
    echo "emitted_variants: $tag: $name changes nothing, left out" >&2
    return
  fi
  echo "$edited" >> $k
  list="$list V(ln_${tag}_$name, $threads)"
}
variant() {
  local name=$1; shift
  add_edited $name sed "$@"
}
regonly='s/const bool row_in_registers = (kt) == (1);/const bool row_in_registers = true;/'
variant emitted -e 's/x/x/'
variant regonly -e "$regonly"
variant colplain -e 's/tsl_fetch16<8, false, true>(/tsl_fetch16<8>(/'
variant colsel -e 's/tsl_fetch16<8, false, true>(/sel_fetch16<8>(/'
# Splits the row-in-registers path's 16-byte weight / bias fetches into two 8-byte ones: those of
# the register arrays matching $1 (a regex: rg for the weight, rb for the bias, r[gb] both); what
# the emitter does since call E where a chunk reads two column vectors beside a held row.
split_halves() {
  python3 -c '
import re, sys
s = sys.stdin.read()
i = s.index("if (row_in_registers) {"); j = s.index("\n  } else {", i)
pat = re.compile(r"const auto (raw\d+) = tsl_fetch16<8, false, true>\((p(?: \+ \d+)?), (ok\d+), 0x00000000u\);\n(\s*)tsl_unpack16<8>\(\1, &(" + sys.argv[1] + r"\w*)\[(\d+)\], false\);")
def half(m):
    raw, p, ok, ind, arr, k = m.groups(); k = int(k)
    return (f"const auto {raw}a = tsl_fetch16<4>({p}, {ok}, 0u);\n{ind}tsl_unpack16<4>({raw}a, &{arr}[{k}], false);\n"
            f"{ind}const auto {raw}b = tsl_fetch16<4>({p} + 4, {ok}, 0u);\n{ind}tsl_unpack16<4>({raw}b, &{arr}[{k + 4}], false);")
sys.stdout.write(s[:i] + pat.sub(half, s[i:j]) + s[j:])' "$1"
}
# The reverse: the emitter's 8-byte halves back into one 16-byte read-only fetch (the form before
# call E, which spills at 32 registers).
join_halves() {
  python3 -c '
import re, sys
s = sys.stdin.read()
pat = re.compile(r"const auto (raw\d+) = tsl_fetch16<4>\((p(?: \+ \d+)?), (ok\d+), (0x[0-9a-f]+u)\);\n\s*const auto raw\d+ = tsl_fetch16<4>\(.*?\);\n(\s*)tsl_unpack16<4>\(\1, &(\w+)\[(\d+)\], (\w+)\);\n\s*tsl_unpack16<4>\(.*?\);")
sys.stdout.write(pat.sub(lambda m: f"const auto {m[1]} = tsl_fetch16<8, false, true>({m[2]}, {m[3]}, {m[4]});\n{m[5]}tsl_unpack16<8>({m[1]}, &{m[6]}[{m[7]}], {m[8]});", s))'
}
add_edited colhalf split_halves 'r[gb]'
add_edited ghalf split_halves rg
add_edited col16 join_halves
variant nopdl -e 's/tessel::device::grid_dependency_wait();//'
rot='((tid - (int)((reinterpret_cast<unsigned long long>(X + (long long)blockIdx.x * N) \& 127) >> 4)) \& (blockDim.x - 1)) * 8'
variant rot -e "s/const int thr1_d1 = (tid) \* 8;/const int thr1_d1 = $rot;/" \
  -e "s/const int thr2_d0 = (tid) \* 8;/const int thr2_d0 = $rot;/"
variant rsqrt -e 's|(1.0f / sqrtf(ve\[v\]))|rsqrtf(ve[v])|'
variant nofull -e 's/if ([a-z0-9 *]* + [0-9]* <= N) {  \/\/ full tile/if (false) {  \/\/ full tile/'
for v in $list; do echo "$v"; done | paste -d' ' - - >> $dir/variants.list
{
  echo '#pragma once'
  echo '#include "emitted_kernels.cuh"'
  echo '#define EMITTED_VARIANTS(V) \'
  sed 's/$/ \\/' $dir/variants.list
  echo
} > $dir/emitted_variants.cuh
