# steploop.py CUBIN...: the wgmma backward's step loop in each cubin (the shortest loop of the main
# kernel holding 8 or more HGMMA): its length in instructions and its S2UR and R2UR count.
# cuobjdump from a CUDA toolkit, or from the triton wheel (pip download --no-deps triton).
import os, re, subprocess, sys, tempfile
CU = os.environ.get("CUOBJDUMP", "cuobjdump")
for f in sys.argv[1:]:
    data = open(f, "rb").read()
    elf = data[data.find(b"\x7fELF"):]
    elf_path = os.path.join(tempfile.gettempdir(), "steploop.elf")
    open(elf_path, "wb").write(elf)
    sass = subprocess.run([CU, "-sass", "-fun", "swr_attention_backward_v1", elf_path],
                          capture_output=True, text=True).stdout
    rows = []
    for line in sass.splitlines():
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if m: rows.append((int(m.group(1), 16), m.group(2)))
    addr = [a for a, _ in rows]
    best = None
    for i, (a, t) in enumerate(rows):
        if "BRA" not in t: continue
        m = re.search(r"0x([0-9a-f]+)", t)
        if not m: continue
        tgt = int(m.group(1), 16)
        if tgt >= a or tgt not in addr: continue
        j = addr.index(tgt)
        body = [x for _, x in rows[j:i + 1]]
        if sum("HGMMA" in b for b in body) >= 8 and (best is None or len(body) < len(best)):
            best = body
    s2ur = sum("S2UR" in b for b in best); r2ur = sum("R2UR" in b for b in best)
    print(f"{len(best):5} instr  S2UR {s2ur}  R2UR {r2ur}  {f}")
