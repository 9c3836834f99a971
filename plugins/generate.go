package plugins

// The built-in plugins, and the test plugins under testdata/, are Go programs compiled
// to WASI preview 1. The builds are reproducible: the same Go release gives the same
// bytes (TestBuiltinsReproducible checks the committed ones). Run `go generate
// ./plugins/` after changing a plugin or its packages, and commit the .wasm files (the
// built-ins as .wasm.zst: zstd at its strongest takes them from 5.5 MB to 1.3 MB of the
// server's binary, where gzip -9 left 1.6 MB; they are unpacked only when first used).
// The two built-ins are Go programs sharing most of their code (the Go runtime, the
// JSON scanner), so csv is compressed as a patch from redactor (zstd --patch-from:
// redactor's bytes are its dictionary): 175 KB instead of 563 KB, 0.9 MB for both.
// The analysis formatters follow suit: qdpx as a patch from redactor (580 KB instead
// of 940 KB), analysis-md and analysis-html as patches from qdpx, with which they share
// JSON decoding (250 KB and 790 KB; html/template is most of the latter).

//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o builtin/redactor.wasm ./builtin/redactor
//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o builtin/csv.wasm ./builtin/csv
//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o builtin/qdpx.wasm ./builtin/qdpx
//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o builtin/analysis-md.wasm ./builtin/analysis-md
//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o builtin/analysis-html.wasm ./builtin/analysis-html
//go:generate zstd --ultra -22 --long=27 -q -f --rm --patch-from=builtin/redactor.wasm builtin/csv.wasm
//go:generate zstd --ultra -22 --long=27 -q -f --rm --patch-from=builtin/qdpx.wasm builtin/analysis-md.wasm
//go:generate zstd --ultra -22 --long=27 -q -f --rm --patch-from=builtin/qdpx.wasm builtin/analysis-html.wasm
//go:generate zstd --ultra -22 --long=27 -q -f --rm --patch-from=builtin/redactor.wasm builtin/qdpx.wasm
//go:generate zstd --ultra -22 --long=27 -q -f --rm builtin/redactor.wasm
//go:generate chmod 0644 builtin/redactor.wasm.zst builtin/csv.wasm.zst builtin/qdpx.wasm.zst builtin/analysis-md.wasm.zst builtin/analysis-html.wasm.zst
//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o testdata/sandbox/sandbox.wasm ./testdata/sandbox
//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o testdata/jsonl/jsonl.wasm ./testdata/jsonl
