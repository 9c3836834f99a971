package plugins

// The built-in plugins are Go programs compiled to WASI preview 1 and embedded
// zstd-compressed, each on its own (they are unpacked when first used). The builds are
// reproducible: the same Go release gives the same bytes, and TestBuiltinsReproducible
// rebuilds them and compares them with the embedded ones. Run `go generate ./plugins/`
// after changing a built-in plugin or the packages it uses, and commit the .wasm.zst
// files.
//
// The test plugins under testdata/ are not kept built: package plugintest builds them
// from their sources when a test asks for one.

//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o builtin/redactor.wasm ./builtin/redactor
//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o builtin/csv.wasm ./builtin/csv
//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o builtin/qdpx.wasm ./builtin/qdpx
//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o builtin/analysis-md.wasm ./builtin/analysis-md
//go:generate env GOOS=wasip1 GOARCH=wasm GOWASM= GOFLAGS= go build -trimpath -buildvcs=false -ldflags=-buildid= -o builtin/analysis-html.wasm ./builtin/analysis-html
//go:generate zstd --ultra -22 --long=27 -q -f --rm builtin/redactor.wasm builtin/csv.wasm builtin/qdpx.wasm builtin/analysis-md.wasm builtin/analysis-html.wasm
//go:generate chmod 0644 builtin/redactor.wasm.zst builtin/csv.wasm.zst builtin/qdpx.wasm.zst builtin/analysis-md.wasm.zst builtin/analysis-html.wasm.zst
