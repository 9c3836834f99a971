package plugins

// The built-in plugins, and the test plugins under testdata/, are Go programs compiled
// to WASI preview 1. The builds are reproducible: the same Go release gives the same
// bytes (TestBuiltinsReproducible checks the committed ones). Run `go generate
// ./plugins/` after changing a plugin or its packages, and commit the .wasm files.

//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o builtin/redactor.wasm ./builtin/redactor
//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o builtin/csv.wasm ./builtin/csv
//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o testdata/sandbox/sandbox.wasm ./testdata/sandbox
//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o testdata/jsonl/jsonl.wasm ./testdata/jsonl
