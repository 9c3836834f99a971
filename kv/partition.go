package kv

// Environment is a credential's data environment, from its key prefix. It is separate
// from a study's mode.
type Environment string

const (
	EnvTest Environment = "test"
	EnvLive Environment = "live"
)

// Valid reports whether e is test or live.
func (e Environment) Valid() bool { return e == EnvTest || e == EnvLive }

// Partition is the (organisation, environment) pair every research record belongs to.
// It leads every listed record's key, so a range over one partition cannot reach another.
type Partition struct {
	Org ID
	Env Environment
}

const partitionLen = 17

func (p Partition) prefix() []byte {
	b := make([]byte, partitionLen, partitionLen+24)
	copy(b, p.Org[:])
	if p.Env == EnvLive {
		b[16] = 'l'
	} else {
		b[16] = 't'
	}
	return b
}

// key returns partition prefix + id.
func (p Partition) key(id ID) []byte {
	return append(p.prefix(), id[:]...)
}
