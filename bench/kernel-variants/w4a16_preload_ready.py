"""An experiment by hand, before a pass: the lowered IR of W4A16's tiled, split-roles variant
(`c64x16_k256_h2_w3_p2_st6`: two producer warpgroups issuing K tiles in turns) with each
producer's first ring-depth weight loads (Q and the scales: `ready` tensors, which no earlier
launch writes) issued before its `grid_wait`, into the empty ring slots, announced by
`mbarrier_expect_tx {no_arrival}`; the main loop then loads only X for those turns (its arrival
with X's bytes completes the phase). What it measures: how much of the launch's fixed cost is the
first weight loads' latency after the wait. Usage: w4a16_preload_ready.py IN.lowered.tir
OUT.lowered.tir (IN from `tessel compile VARIANT.tir --emit=ir`).
Superseded by the pass: `overlap_launches = preload` (src/transforms/async/overlap_launches.h)
does this for any producer count from the tile program; this script stays as the record's command.
"""
import re, sys
res=open(sys.argv[1]).read().split('\n')
def find(start, pat):
    for j in range(start, len(res)):
        if pat in res[j]: return j
    raise Exception(pat)
for first in ['first_thread = 0, issue = one, role = producer','first_thread = 512, issue = one, role = producer']:
    a=find(0, first)
    gw=find(a,'grid_wait')
    loop=gw+1
    end=find(loop,'      copy_async %X_tile0')
    body=res[loop+1:end+2]
    header=res[loop]
    m=re.match(r'    for (%\S+) = %c0 to (%\S+) step %c1 \{', header)
    iv, trips = m.group(1), m.group(2)
    sfx = '_pre' if first.startswith('first_thread = 0') else '_pre1'
    pre=['    %%three%s = const {value = 3} : index' % sfx,
         '    %%pre_trips%s = min %s, %%three%s : index' % (sfx, trips, sfx),
         '    for %s%s = %%c0 to %%pre_trips%s step %%c1 {' % (iv, sfx, sfx)]
    defs={iv}
    for l in body:
        mm=re.match(r'\s+((?:%\S+(?:, )?)+) = ', l)
        if mm:
            for v in mm.group(1).split(', '): defs.add(v)
    ren=lambda l: re.sub(r'(%[A-Za-z0-9_]+)', lambda m: m.group(1)+sfx if m.group(1) in defs else m.group(1), l)
    # The preload: the body up to the weight ring's last load, without the waits and X's tiles.
    last = max(j for j, l in enumerate(body) if 'copy_async' in l and '%ring_sQ_full' in l)
    for l in body[:last + 1]:
        if 'mbarrier_wait' in l or 'X_tile' in l: continue
        if 'mbarrier_expect_tx %ring_sQ_full' in l:
            pre.append(ren(l).replace('{bytes = 12544}','{bytes = 8448, no_arrival}')); continue
        pre.append(ren(l))
    pre.append('    }')
    nb=[]
    x1=[b for b in body if 'copy_async %X_tile1' in b][0]
    for l in body:
        if 'mbarrier_expect_tx %ring_sQ_full' in l:
            ind=l[:len(l)-len(l.lstrip())]
            nb += [ind+'%%is_pre%s = cmp %s, %%pre_trips%s {pred = lt} : i1' % (sfx, iv, sfx),
                   ind+'%%not_pre%s = cmp %s, %%pre_trips%s {pred = ge} : i1' % (sfx, iv, sfx),
                   ind+'if %%is_pre%s {' % sfx,
                   ind+'  '+l.strip().replace('{bytes = 12544}','{bytes = 4096}'),
                   ind+'  '+x1.strip(), ind+'}',
                   ind+'if %%not_pre%s {' % sfx, ind+'  '+l.strip()]
            nb += [ind+'  '+b.strip() for b in body if 'copy_async %Q_tile' in b or 'copy_async %S_tile' in b or 'copy_async %X_tile1' in b]
            nb.append(ind+'}')
            continue
        if 'copy_async %Q_tile' in l or 'copy_async %S_tile' in l or 'copy_async %X_tile1' in l: continue
        nb.append(l)
    res=res[:gw]+pre+[res[gw], header]+nb+res[end+2:]
open(sys.argv[2],'w').write('\n'.join(res))
