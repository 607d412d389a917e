"""What an ELF cubin says about its kernels, without the CUDA tools: the
.text size of each (its SASS, 16 bytes an instruction) and the registers
ptxas gave each (.nv.info, EIATTR_REGCOUNT). Used by bench/static-counts.py
and session scripts under bench/results."""
import struct

EIATTR_REGCOUNT = 0x2F


def sections(data):
    """[(name, header)] of the ELF's sections; a header is the 64-bit
    section header's fields (name, type, flags, addr, offset, size, link,
    info, addralign, entsize)."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    size, count, names = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * size)
               for i in range(count)]
    table = headers[names]
    strtab = data[table[4]:table[4] + table[5]]
    return [(strtab[h[0]:strtab.index(b"\0", h[0])].decode(), h)
            for h in headers]


def text_sizes(data):
    """{kernel: .text bytes}."""
    return {name[len(".text."):]: h[5] for name, h in sections(data)
            if name.startswith(".text.")}


def registers(data):
    """{kernel: registers a thread}."""
    parts = sections(data)
    symtab = next(h for _, h in parts if h[1] == 2)  # SHT_SYMTAB
    strs = parts[symtab[6]][1]
    strings = data[strs[4]:strs[4] + strs[5]]
    symbols = []
    for i in range(symtab[5] // 24):
        off, = struct.unpack_from("<I", data, symtab[4] + i * 24)
        symbols.append(strings[off:strings.index(b"\0", off)].decode())
    regs = {}
    for name, h in parts:
        if name != ".nv.info":
            continue
        at, end = h[4], h[4] + h[5]
        while at < end:
            fmt, attr = data[at], data[at + 1]
            if fmt == 4:  # EIFMT_SVAL: a 16-bit size, then the value
                length, = struct.unpack_from("<H", data, at + 2)
                if attr == EIATTR_REGCOUNT:
                    symbol, count = struct.unpack_from("<II", data, at + 4)
                    regs[symbols[symbol]] = count
                at += 4 + length
            else:  # EIFMT_HVAL: a 16-bit value; EIFMT_NVAL: none
                at += 4 if fmt == 3 else 2
    return regs
