package plugins

// A tiny WebAssembly assembler for modules Go cannot produce: forbidden imports,
// missing exports, traps, a memory over the limit, or a plugin that prints exactly a
// given descriptor. Such modules compile in microseconds, so the tests built on them
// are fast.

// wasmModule describes a module with at most one defined function, "_start".
type wasmModule struct {
	imports     []wasmImport
	memImport   bool   // import env.memory instead of defining one
	memPages    uint32 // minimum pages of the defined memory; 0 means 1
	noMemExport bool
	noStart     bool
	// print, when set, makes _start write it to stdout with fd_write before code.
	print string
	// code runs in _start (after the print), as raw instructions.
	code []byte
}

type wasmImport struct {
	module, name string
	typ          byte // index into the type section below
}

// The module's function types.
const (
	typeVoid    = 0 // () -> ()
	typeFdWrite = 1 // (i32, i32, i32, i32) -> i32
	typeI32     = 2 // (i32) -> ()
)

// Instructions used by the tests.
const (
	opUnreachable = 0x00
	opCall        = 0x10
	opDrop        = 0x1a
	opI32Const    = 0x41
	opEnd         = 0x0b
)

func uleb(n uint32) []byte {
	var out []byte
	for {
		b := byte(n & 0x7f)
		n >>= 7
		if n != 0 {
			out = append(out, b|0x80)
			continue
		}
		return append(out, b)
	}
}

func sleb(n int32) []byte {
	var out []byte
	for {
		b := byte(n & 0x7f)
		n >>= 7
		if (n == 0 && b&0x40 == 0) || (n == -1 && b&0x40 != 0) {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

func wasmName(s string) []byte { return append(uleb(uint32(len(s))), s...) }

func wasmVec(items ...[]byte) []byte {
	out := uleb(uint32(len(items)))
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

func wasmSection(id byte, payload []byte) []byte {
	return append(append([]byte{id}, uleb(uint32(len(payload)))...), payload...)
}

// i32Const returns the instruction pushing v.
func i32Const(v int32) []byte { return append([]byte{opI32Const}, sleb(v)...) }

// callFunc returns the instruction calling function idx.
func callFunc(idx uint32) []byte { return append([]byte{opCall}, uleb(idx)...) }

// bytes assembles the module.
func (m wasmModule) bytes() []byte {
	out := []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}
	out = append(out, wasmSection(1, wasmVec(
		[]byte{0x60, 0x00, 0x00},
		[]byte{0x60, 0x04, 0x7f, 0x7f, 0x7f, 0x7f, 0x01, 0x7f},
		[]byte{0x60, 0x01, 0x7f, 0x00},
	))...)

	imports := m.imports
	fdWrite := -1
	if m.print != "" {
		fdWrite = len(imports)
		imports = append(imports, wasmImport{"wasi_snapshot_preview1", "fd_write", typeFdWrite})
	}
	var entries [][]byte
	for _, im := range imports {
		entries = append(entries, append(append(wasmName(im.module), wasmName(im.name)...), 0x00, im.typ))
	}
	if m.memImport {
		entries = append(entries, append(append(wasmName("env"), wasmName("memory")...), 0x02, 0x00, 0x01))
	}
	if len(entries) > 0 {
		out = append(out, wasmSection(2, wasmVec(entries...))...)
	}

	startIdx := uint32(len(imports))
	if !m.noStart {
		out = append(out, wasmSection(3, wasmVec([]byte{typeVoid}))...)
	}
	if !m.memImport {
		pages := max(m.memPages, 1)
		out = append(out, wasmSection(5, wasmVec(append([]byte{0x00}, uleb(pages)...)))...)
	}
	var exports [][]byte
	if !m.noStart {
		exports = append(exports, append(append(wasmName("_start"), 0x00), uleb(startIdx)...))
	}
	if !m.noMemExport {
		exports = append(exports, append(wasmName("memory"), 0x02, 0x00))
	}
	if len(exports) > 0 {
		out = append(out, wasmSection(7, wasmVec(exports...))...)
	}
	if !m.noStart {
		var body []byte
		if fdWrite >= 0 {
			// fd_write(1, iovs=0, 1 iovec, nwritten=8); the iovec at 0 points at 16.
			body = append(body, i32Const(1)...)
			body = append(body, i32Const(0)...)
			body = append(body, i32Const(1)...)
			body = append(body, i32Const(8)...)
			body = append(body, callFunc(uint32(fdWrite))...)
			body = append(body, opDrop)
		}
		body = append(body, m.code...)
		body = append([]byte{0x00}, append(body, opEnd)...) // no locals
		out = append(out, wasmSection(10, wasmVec(append(uleb(uint32(len(body))), body...)))...)
	}
	if m.print != "" {
		iovec := []byte{16, 0, 0, 0, byte(len(m.print)), byte(len(m.print) >> 8), 0, 0}
		seg1 := append(append([]byte{0x00}, append(i32Const(0), opEnd)...), wasmVec(bytesOf(iovec)...)...)
		seg2 := append(append([]byte{0x00}, append(i32Const(16), opEnd)...), wasmVec(bytesOf([]byte(m.print))...)...)
		out = append(out, wasmSection(11, wasmVec(seg1, seg2))...)
	}
	return out
}

// bytesOf splits b into one-byte items for wasmVec, which counts items.
func bytesOf(b []byte) [][]byte {
	items := make([][]byte, len(b))
	for i := range b {
		items[i] = b[i : i+1]
	}
	return items
}

// printer returns a module whose _start prints s, whatever its arguments: given a
// descriptor, it is a working plugin that writes the descriptor as its output too.
func printer(s string) []byte { return wasmModule{print: s}.bytes() }
