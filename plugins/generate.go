package plugins

// The built-in plugins, and the test plugins under testdata/, are Go programs compiled
// to WASI preview 1. The builds are reproducible: the same Go release gives the same
// bytes (TestBuiltinsReproducible checks the committed ones). Run `go generate
// ./plugins/` after changing a plugin or its packages, and commit the .wasm files (the
// built-ins as .wasm.gz: gzip takes them from 5.5 MB to 1.6 MB of the server's binary,
// and they are unpacked only when first used).

//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o builtin/redactor.wasm ./builtin/redactor
//go:generate gzip -9 -n -f builtin/redactor.wasm
//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o builtin/csv.wasm ./builtin/csv
//go:generate gzip -9 -n -f builtin/csv.wasm
//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o testdata/sandbox/sandbox.wasm ./testdata/sandbox
//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o testdata/jsonl/jsonl.wasm ./testdata/jsonl
