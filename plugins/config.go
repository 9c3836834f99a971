package plugins

import (
	"fmt"
	"time"

	"github.com/tetratelabs/wazero"
)

// Config sets where the host caches compiled code and what one run may use. A zero
// field takes its value from DefaultConfig.
type Config struct {
	// CacheDir holds compiled machine code between restarts (data/cache/). Empty keeps
	// the cache in memory only.
	CacheDir string
	// Cache, when set, is used instead of a cache of the host's own (CacheDir is then
	// ignored), and the host does not close it: hosts sharing one share compiled code
	// in memory, so a module compiled for one loads at once in the others. A test suite
	// making many hosts needs this; a server has one host.
	Cache wazero.CompilationCache
	// MemoryLimitPages caps each instance's linear memory, in 64 KiB pages.
	MemoryLimitPages uint32
	// Timeout bounds one run (describe, redact or format).
	Timeout time.Duration
	// Grace is how long after a run's deadline the host waits for the run to stop
	// before it abandons it (see the package comment).
	Grace time.Duration
	// MaxOutput caps what one run may write to stdout, in bytes.
	MaxOutput int64
	// MaxLoaded is how many compiled plugins are kept in memory; the least recently
	// used beyond it are dropped and recompiled (from CacheDir) when next run. The
	// built-in plugins are always kept.
	MaxLoaded int
}

// DefaultConfig returns the defaults: no disk cache, 64 MiB of memory, 30 seconds per
// run plus 2 seconds of grace, 256 MiB of output and 16 compiled plugins.
func DefaultConfig() Config {
	return Config{
		MemoryLimitPages: 1024,
		Timeout:          30 * time.Second,
		Grace:            2 * time.Second,
		MaxOutput:        256 << 20,
		MaxLoaded:        16,
	}
}

// withDefaults fills the zero fields of c from DefaultConfig and checks the result.
func (c Config) withDefaults() (Config, error) {
	d := DefaultConfig()
	if c.MemoryLimitPages == 0 {
		c.MemoryLimitPages = d.MemoryLimitPages
	}
	if c.Timeout <= 0 {
		c.Timeout = d.Timeout
	}
	if c.Grace <= 0 {
		c.Grace = d.Grace
	}
	if c.MaxOutput <= 0 {
		c.MaxOutput = d.MaxOutput
	}
	if c.MaxLoaded <= 0 {
		c.MaxLoaded = d.MaxLoaded
	}
	if c.MemoryLimitPages > 65536 {
		return c, fmt.Errorf("plugins: MemoryLimitPages %d is over the 4 GiB of a 32-bit memory (65536 pages)", c.MemoryLimitPages)
	}
	return c, nil
}
