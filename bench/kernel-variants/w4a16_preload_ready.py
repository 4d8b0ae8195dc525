"""An experiment by hand, before a pass: the lowered IR of one of W4A16's tiled, split-roles
variants (`c64x16_k256_h2_w3_p2_st6`: two producer warpgroups issuing K tiles in turns;
`c64x8_k256_h2_w3_p1_st8`: one producer) with each producer's first ring-depth weight loads (Q and
the scales: `ready` tensors, which no earlier launch writes) issued before its `grid_wait`, into
the empty ring slots, announced by `mbarrier_expect_tx {no_arrival}`; the main loop then loads
only the X tile of the weight ring for those turns (its arrival with X's bytes completes the
phase). What it measures: how much of the launch's fixed cost is the first weight loads' latency
after the wait (bench/results/2026-11-28-w4a16-preload-ready-h100.md). Usage:
w4a16_preload_ready.py IN.lowered.tir OUT.lowered.tir (IN from `tessel compile VARIANT.tir
--emit=ir`). Every producer role (`issue = one, role = producer`) is rewritten; the turns preloaded
per producer are the weight ring's slots divided among the producers.
"""
import re, sys

res = open(sys.argv[1]).read().split('\n')


def find(start, pat):
    for j in range(start, len(res)):
        if pat in res[j]:
            return j
    raise Exception(pat)


producers = [l.strip() for l in res if 'issue = one, role = producer' in l]
if not producers:
    raise Exception('no producer role issued by one thread')
ring = re.search(r'%ring_sQ = aref \{slots = (\d+)\}', '\n'.join(res))
if not ring:
    raise Exception('no weight ring %ring_sQ')
turns = -(-int(ring.group(1)) // len(producers))  # ceil(slots / producers)
for index, first in enumerate(producers):
    a = find(0, first)
    gw = find(a, 'grid_wait')
    loop = gw + 1
    end = find(loop, '      copy_async %X_tile0')
    body = res[loop + 1:end + 2]
    header = res[loop]
    m = re.match(r'    for (%\S+) = %c0 to (%\S+) step %c1 \{', header)
    iv, trips = m.group(1), m.group(2)
    sfx = '_pre' if index == 0 else '_pre%d' % index
    # The weight ring's bytes per slot and the X tile's share of them (f16 rows x columns).
    total = int(re.search(r'mbarrier_expect_tx %ring_sQ_full, \S+ \{bytes = (\d+)\}',
                          '\n'.join(body)).group(1))
    x1_type = re.search(r'%X_tile1\S* = tile .* : global<f16>\[(\d+),(\d+)\]', '\n'.join(body))
    x_bytes = int(x1_type.group(1)) * int(x1_type.group(2)) * 2
    pre = ['    %%turns%s = const {value = %d} : index' % (sfx, turns),
           '    %%pre_trips%s = min %s, %%turns%s : index' % (sfx, trips, sfx),
           '    for %s%s = %%c0 to %%pre_trips%s step %%c1 {' % (iv, sfx, sfx)]
    defs = {iv}
    for l in body:
        mm = re.match(r'\s+((?:%\S+(?:, )?)+) = ', l)
        if mm:
            for v in mm.group(1).split(', '):
                defs.add(v)
    ren = lambda l: re.sub(r'(%[A-Za-z0-9_]+)',
                           lambda m: m.group(1) + sfx if m.group(1) in defs else m.group(1), l)
    expect = '{bytes = %d}' % total
    # The preload: the body up to the weight ring's last load, without the waits and X's tiles.
    last = max(j for j, l in enumerate(body) if 'copy_async' in l and '%ring_sQ_full' in l)
    for l in body[:last + 1]:
        if 'mbarrier_wait' in l or 'X_tile' in l:
            continue
        if 'mbarrier_expect_tx %ring_sQ_full' in l:
            pre.append(ren(l).replace(expect, '{bytes = %d, no_arrival}' % (total - x_bytes)))
            continue
        pre.append(ren(l))
    pre.append('    }')
    nb = []
    x1 = [b for b in body if 'copy_async %X_tile1' in b][0]
    for l in body:
        if 'mbarrier_expect_tx %ring_sQ_full' in l:
            ind = l[:len(l) - len(l.lstrip())]
            nb += [ind + '%%is_pre%s = cmp %s, %%pre_trips%s {pred = lt} : i1' % (sfx, iv, sfx),
                   ind + '%%not_pre%s = cmp %s, %%pre_trips%s {pred = ge} : i1' % (sfx, iv, sfx),
                   ind + 'if %%is_pre%s {' % sfx,
                   ind + '  ' + l.strip().replace(expect, '{bytes = %d}' % x_bytes),
                   ind + '  ' + x1.strip(), ind + '}',
                   ind + 'if %%not_pre%s {' % sfx, ind + '  ' + l.strip()]
            nb += [ind + '  ' + b.strip() for b in body if 'copy_async %Q_tile' in b or
                   'copy_async %S_tile' in b or 'copy_async %X_tile1' in b]
            nb.append(ind + '}')
            continue
        if 'copy_async %Q_tile' in l or 'copy_async %S_tile' in l or 'copy_async %X_tile1' in l:
            continue
        nb.append(l)
    res = res[:gw] + pre + [res[gw], header] + nb + res[end + 2:]
open(sys.argv[2], 'w').write('\n'.join(res))
