import re,sys,collections
lines=open(sys.argv[1]).read().splitlines()
ins=[]
for l in lines:
    m=re.match(r'\s+/\*([0-9a-f]{4,})\*/\s+(.*?);',l)
    if m: ins.append((int(m.group(1),16),m.group(2).strip()))
addr_idx={a:i for i,(a,_) in enumerate(ins)}
best=None
for i,(a,t) in enumerate(ins):
    m=re.search(r'BRA\s+(?:!?U?P\d+,\s*)?`?\(?\.L_x_\d+\)?|BRA.*0x([0-9a-f]+)',t)
    m2=re.search(r'0x([0-9a-f]+)',t) if 'BRA' in t else None
    if m2:
        tgt=int(m2.group(1),16)
        if tgt<a and tgt in addr_idx:
            j=addr_idx[tgt]; body=ins[j:i+1]
            n=sum('HGMMA' in x for _,x in body)
            if best is None or n>best[0] or (n==best[0] and len(body)<len(best[1])): best=(n,body)
n,body=best
print('HGMMA',n,'instructions',len(body))
c=collections.Counter()
for _,t in body:
    op=re.sub(r'^@!?U?P\w+\s+','',t).split()[0]
    c[op.split('.')[0]]+=1
for k,v in c.most_common(40): print(f'{k:10s}{v}')
if len(sys.argv)>2:
    for a,t in body: print(hex(a),t)
