package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// describeTimeout bounds a "describe" run, whatever Config.Timeout is.
const describeTimeout = 10 * time.Second

// ErrClosed is returned by a Host, and its plugins, once Close was called.
var ErrClosed = errors.New("plugins: host is closed")

// Host loads and runs plugins. Its methods, and those of its plugins, are safe for
// concurrent use.
type Host struct {
	cfg      Config
	cache    wazero.CompilationCache // Config.Cache, or the host's own once newRuntime made it
	ownCache bool                    // the host makes (and Close closes) its own cache
	// The runtime, and the host's own cache, are made by the first compile
	// (newRuntime): an idle server needs neither, and making them (WASI; the cache's
	// folders under DATA/cache) was a good part of a server's start-up. Once made, they
	// and wasi never change.
	runtimeOnce sync.Once
	runtime     wazero.Runtime
	runtimeErr  error
	wasi        map[string]api.FunctionDefinition // what wasi_snapshot_preview1 exports
	// stop cancels every compile in flight: Close never waits for compilation.
	stop   context.Context
	cancel context.CancelFunc

	// mu guards the fields below and every entry's mutable fields.
	mu        sync.Mutex
	closed    bool
	compiling int // compiles in flight; the last one out after Close frees wazero
	compiled  compiledSet
	builtins  map[string]*Plugin
}

// NewHost returns a Host configured from cfg, whose wazero runtime and compilation
// cache are made when the first plugin is loaded. It returns an error if cfg is
// invalid; a cache directory that cannot be created fails that first load.
func NewHost(ctx context.Context, cfg Config) (*Host, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	stop, cancel := context.WithCancel(context.Background())
	h := &Host{
		stop:     stop,
		cancel:   cancel,
		cfg:      cfg,
		cache:    cfg.Cache,
		ownCache: cfg.Cache == nil, // a shared cache is its owner's to close
		builtins: map[string]*Plugin{},
	}
	h.compiled.init(cfg.MaxLoaded)
	return h, nil
}

// newRuntime returns the host's runtime, making it (with WASI) on the first call. It
// returns an error if WASI cannot be instantiated.
func (h *Host) newRuntime() (wazero.Runtime, error) {
	h.runtimeOnce.Do(func() {
		ctx := context.Background()
		switch {
		case !h.ownCache:
		case h.cfg.CacheDir != "":
			cache, err := wazero.NewCompilationCacheWithDir(h.cfg.CacheDir)
			if err != nil {
				h.runtimeErr = fmt.Errorf("plugins: compilation cache: %w", err)
				return
			}
			h.cache = cache
		default:
			h.cache = wazero.NewCompilationCache()
		}
		rc := wazero.NewRuntimeConfig().
			WithCompilationCache(h.cache).
			WithMemoryLimitPages(h.cfg.MemoryLimitPages).
			WithCloseOnContextDone(true).
			WithDebugInfoEnabled(false)
		r := wazero.NewRuntimeWithConfig(ctx, rc)
		if _, err := wasi_snapshot_preview1.Instantiate(ctx, r); err != nil {
			_ = r.Close(ctx)
			h.runtimeErr = fmt.Errorf("plugins: WASI: %w", err)
			return
		}
		h.runtime = r
		h.wasi = r.Module(wasi_snapshot_preview1.ModuleName).ExportedFunctionDefinitions()
	})
	return h.runtime, h.runtimeErr
}

// Close stops every run in progress, cancels every compile in flight, frees all
// compiled code and closes the cache. It returns the first error from wazero.
//
// It never waits for a compile: a server stopping while a plugin compiles (seconds on
// a busy machine) must not take that long to exit. wazero must not be compiling while
// its runtime closes, so when a compile is still winding down after its cancellation,
// the last one to finish closes the runtime instead, and Close returns nil at once.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	h.cancel()
	busy := h.compiling > 0
	h.mu.Unlock()
	if busy {
		return nil
	}
	return h.free(ctx)
}

// free closes the runtime (stopping its runs) and the cache, once closed and no compile
// is in flight.
func (h *Host) free(ctx context.Context) error {
	var err error
	if h.runtime != nil { // made by a compile that has ended: no race with newRuntime
		err = h.runtime.Close(ctx)
	}
	if h.ownCache && h.cache != nil { // made by a compile that has ended, as the runtime
		err = errors.Join(err, h.cache.Close(ctx))
	}
	return err
}

// Config returns the host's configuration with defaults filled in.
func (h *Host) Config() Config { return h.cfg }

// Load compiles wasm (or finds it already compiled), checks its imports and exports,
// and runs it with "describe". It returns the plugin, or an *Error with ReasonInvalid
// for a module that is not a valid plugin (or whatever reason its describe run failed
// for), or ErrClosed.
func (h *Host) Load(ctx context.Context, wasm []byte) (*Plugin, error) {
	return h.load(ctx, wasm, false)
}

// Describe returns what the plugin in wasm says it is, with Load's errors.
func (h *Host) Describe(ctx context.Context, wasm []byte) (Descriptor, error) {
	p, err := h.Load(ctx, wasm)
	if err != nil {
		return Descriptor{}, err
	}
	return p.Descriptor(), nil
}

func (h *Host) load(ctx context.Context, wasm []byte, pin bool) (*Plugin, error) {
	p := &Plugin{host: h, wasm: append([]byte(nil), wasm...), hash: sha256.Sum256(wasm)}
	p.label = "sha256:" + hex.EncodeToString(p.hash[:6])
	e, err := h.acquire(ctx, p, pin)
	if err != nil {
		return nil, err
	}
	defer h.release(e)
	h.mu.Lock()
	known := e.desc
	h.mu.Unlock()
	if known != nil {
		p.desc, p.label = *known, known.Name
		return p, nil
	}
	out := headBuffer{max: 64 << 10}
	if err := h.run(ctx, p, e, "describe", min(describeTimeout, h.cfg.Timeout), []string{"describe"}, emptyReader{}, &out); err != nil {
		return nil, err
	}
	if out.truncated {
		return nil, p.fail("describe", ReasonOutput, "printed more than 64 KiB for describe", nil)
	}
	d, err := parseDescriptor(out.buf)
	if err != nil {
		return nil, p.fail("describe", ReasonInvalid, err.Error(), err)
	}
	h.mu.Lock()
	e.desc = &d
	h.mu.Unlock()
	p.desc, p.label = d, d.Name
	return p, nil
}

// acquire returns p's compiled module, compiling it unless it is in memory, and holds
// it until release. Concurrent calls for the same bytes compile once.
func (h *Host) acquire(ctx context.Context, p *Plugin, pin bool) (*entry, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	e, found := h.compiled.get(p.hash)
	if !found {
		e = h.compiled.add(p.hash)
	}
	e.users++
	e.pinned = e.pinned || pin
	h.mu.Unlock()

	if !found {
		cm, err := h.compile(ctx, p)
		h.mu.Lock()
		e.module, e.err = cm, err
		close(e.ready)
		if err != nil {
			h.compiled.drop(e)
		}
		h.closeEvicted(ctx, h.compiled.trim())
		h.mu.Unlock()
	}
	select {
	case <-e.ready:
	case <-ctx.Done():
		h.release(e)
		return nil, p.fail("load", ReasonCanceled, "canceled while compiling", ctx.Err())
	}
	if e.err != nil {
		h.release(e)
		return nil, e.err
	}
	return e, nil
}

// release ends a hold taken by acquire, freeing the compiled code of an entry that was
// evicted meanwhile once nobody holds it.
func (h *Host) release(e *entry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e.users--
	h.closeEvicted(context.Background(), []*entry{e})
}

// closeEvicted frees the compiled code of the given entries that are evicted and
// unused. h.mu must be held.
func (h *Host) closeEvicted(ctx context.Context, es []*entry) {
	for _, e := range es {
		if e.evicted && e.users == 0 && e.module != nil {
			_ = e.module.Close(ctx)
			e.module = nil
		}
	}
}

// compile turns p's bytes into machine code (or takes it from the cache) and checks
// that the module is a WASI command that imports nothing else.
func (h *Host) compile(ctx context.Context, p *Plugin) (wazero.CompiledModule, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	h.compiling++
	h.mu.Unlock()
	defer h.endCompile()
	// wazero checks the context between functions, but only when it compiles with more
	// than one worker: Close cancels h.stop. Two or more workers also halve a compile
	// on a machine with cores to spare.
	ctx = experimental.WithCompilationWorkers(ctx, min(max(runtime.GOMAXPROCS(0), 2), 4))
	ctx, cancel := context.WithCancel(ctx)
	defer context.AfterFunc(h.stop, cancel)()
	defer cancel()
	r, err := h.newRuntime()
	if err != nil {
		return nil, err
	}
	cm, err := r.CompileModule(ctx, p.wasm)
	if err != nil {
		if h.isClosed() {
			return nil, ErrClosed
		}
		if ctx.Err() != nil {
			return nil, p.fail("load", ReasonCanceled, "canceled while compiling", ctx.Err())
		}
		return nil, p.fail("load", ReasonInvalid, "not a valid WebAssembly module: "+err.Error(), err)
	}
	if h.isClosed() {
		return nil, ErrClosed // the runtime, freed by the last compile out, owns cm
	}
	if msg := h.checkModule(cm); msg != "" {
		_ = cm.Close(ctx)
		return nil, p.fail("load", ReasonInvalid, msg, nil)
	}
	return cm, nil
}

// endCompile ends a compile begun by compile, freeing wazero if the host was closed
// meanwhile and this was the last compile in flight.
func (h *Host) endCompile() {
	h.mu.Lock()
	h.compiling--
	last := h.closed && h.compiling == 0
	h.mu.Unlock()
	if last {
		_ = h.free(context.Background())
	}
}

// checkModule returns why cm is not an acceptable plugin, or "".
func (h *Host) checkModule(cm wazero.CompiledModule) string {
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		if mod != wasi_snapshot_preview1.ModuleName {
			return fmt.Sprintf("imports %s.%s; a plugin may import only %s functions", mod, name, wasi_snapshot_preview1.ModuleName)
		}
		if _, ok := h.wasi[name]; !ok {
			return fmt.Sprintf("imports %s.%s, which is not a WASI preview 1 function", mod, name)
		}
	}
	for _, m := range cm.ImportedMemories() {
		mod, name, _ := m.Import()
		return fmt.Sprintf("imports memory %s.%s; a plugin must define its own", mod, name)
	}
	start, ok := cm.ExportedFunctions()["_start"]
	if !ok {
		return `does not export "_start"; a plugin is a WASI command`
	}
	if len(start.ParamTypes()) != 0 || len(start.ResultTypes()) != 0 {
		return `exports "_start" with parameters or results; want func()`
	}
	if _, ok := cm.ExportedMemories()["memory"]; !ok {
		return `does not export "memory"`
	}
	return ""
}

func (h *Host) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}
