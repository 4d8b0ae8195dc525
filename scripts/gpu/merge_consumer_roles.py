#!/usr/bin/env python3
"""A probe (not product code; seventeenth session, 2026-11-29): the CUDA tessel emits for a W4A16
kernel whose K loop split-roles gives to three consumer roles (`_w3`) has three copies of the
same loop, one a role, which differ only in the role's turn (0, 1, 2). This rewrites the emitted
source so that the three roles run one copy: `turn` from the warp index (warp-uniform), the loop
emitted once with the turn in its trip count and its sequence number, and each role's own code
after the loop (the first sums the others' partial sums and stores; the others store partials)
behind `if (turn == ...)`. Whether one copy runs faster (fewer instruction-cache misses, the
descriptors in uniform registers in all three) is what scripts/gpu/w4a16_merged_roles_probe.sh
measures, by putting the rewritten kernel's cubin in the kernel cache in place of a variant's.
  merge_consumer_roles.py EMITTED.cu MERGED.cu
"""
import re, sys
L = open(sys.argv[1]).read().split('\n')
def find(pat, start=0):
    for i in range(start, len(L)):
        if re.search(pat, L[i]): return i
    raise SystemExit('not found: ' + pat)
r1 = find(r'if \(tsl_warp >= 4 && tsl_warp < 8\)')
r2 = find(r'if \(tsl_warp >= 8 && tsl_warp < 12\)')
r3 = find(r'if \(tsl_warp >= 12 && tsl_warp < 16\)')
end3 = len(L) - 1
while L[end3].strip() != '}': end3 -= 1   # kernel's closing brace
end3 -= 1                                 # role 3's closing brace
assert L[end3] == '  }', L[end3]
role1 = L[r1:r2]; role2 = L[r2:r3]; role3 = L[r3:end3 + 1]
assert role1[-1] == '  }' and role2[-1] == '  }'
def loop_end(block):
    # the K loop's closing line: '    }' after the 'for (int k_turn' line
    s = next(i for i, l in enumerate(block) if 'for (int k_turn' in l)
    depth = 0
    for i in range(s, len(block)):
        depth += block[i].count('{') - block[i].count('}')
        if depth == 0: return i
tail = lambda b, rename: [re.sub(rename, 'c', l) for l in b[loop_end(b) + 1:-1]]
out = L[:r1]
body = role1[:loop_end(role1) + 1]
body[0] = '  if (tsl_warp >= 4 && tsl_warp < 16) {  // the three consumer roles as one code path (probe)'
body.insert(1, '    const int turn = (tsl_warp - 4) / 4;  // warp-uniform')
body = [l.replace('static_cast<int>(threadIdx.x) - 128;', 'static_cast<int>(threadIdx.x) - 128 - 128 * turn;') for l in body]
body = [l.replace('const int k_padded = tiles_k + 2;', 'const int k_padded = tiles_k + 2 - turn;') for l in body]
body = [l.replace('const int k_1 = k_scaled + 0;', 'const int k_1 = k_scaled + turn;') for l in body]
body = [l.replace('const int seq_turn = turn_seq + 0;', 'const int seq_turn = turn_seq + turn;') for l in body]
out += body
out.append('    if (turn == 0) {')
out += ['  ' + l for l in role1[loop_end(role1) + 1:-1]]
out.append('    } else if (turn == 1) {')
out += ['  ' + l for l in tail(role2, r'\bc_1\b')]
out.append('    } else {')
out += ['  ' + l for l in tail(role3, r'\bc_2\b')]
out.append('    }')
out.append('  }')
out += L[end3 + 1:]
open(sys.argv[2], 'w').write('\n'.join(out))
