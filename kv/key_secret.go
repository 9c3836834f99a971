package kv

import (
	"crypto/rand"
	"crypto/sha256"
	"hash/crc32"
	"math/big"
)

// API key secrets look like jsk_live_<43 base62 chars><6 base62 checksum chars>: 32 random
// bytes, then a CRC-32 of everything before it, so secret scanners (and our own parser)
// can reject a mistyped or invented key without a database lookup.
const (
	keyPrefixLive  = "jsk_live_"
	keyPrefixTest  = "jsk_test_"
	keyBodyLen     = 43 // 32 bytes in base62 always fit 43 digits
	keyChecksumLen = 6
	keySecretLen   = len(keyPrefixLive) + keyBodyLen + keyChecksumLen
	base62         = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// newKeySecret returns a fresh secret for env.
func newKeySecret(env Environment) string {
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	body := toBase62(new(big.Int).SetBytes(raw[:]), keyBodyLen)
	head := keyPrefix(env) + body
	return head + checksum(head)
}

func keyPrefix(env Environment) string {
	if env == EnvLive {
		return keyPrefixLive
	}
	return keyPrefixTest
}

func checksum(s string) string {
	return toBase62(new(big.Int).SetUint64(uint64(crc32.ChecksumIEEE([]byte(s)))), keyChecksumLen)
}

func toBase62(n *big.Int, width int) string {
	out := make([]byte, width)
	base := big.NewInt(62)
	mod := new(big.Int)
	for i := width - 1; i >= 0; i-- {
		n.DivMod(n, base, mod)
		out[i] = base62[mod.Int64()]
	}
	return string(out)
}

// ParseKeySecret checks a presented API key's shape and checksum and returns its data
// environment. ok is false for anything that is not a well-formed interviewd key.
func ParseKeySecret(s string) (env Environment, ok bool) {
	if len(s) != keySecretLen {
		return "", false
	}
	switch s[:len(keyPrefixLive)] {
	case keyPrefixLive:
		env = EnvLive
	case keyPrefixTest:
		env = EnvTest
	default:
		return "", false
	}
	for i := len(keyPrefixLive); i < len(s); i++ {
		if !isBase62(s[i]) {
			return "", false
		}
	}
	split := len(s) - keyChecksumLen
	if checksumFast(s[:split]) != s[split:] {
		return "", false
	}
	return env, true
}

// checksumFast is checksum without big.Int, for the per-request path.
func checksumFast(s string) string {
	var buf [keyChecksumLen]byte
	n := crc32.ChecksumIEEE([]byte(s))
	for i := keyChecksumLen - 1; i >= 0; i-- {
		buf[i] = base62[n%62]
		n /= 62
	}
	return string(buf[:])
}

func isBase62(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// HashKeySecret returns the SHA-256 of a secret: the only form a key is stored in.
func HashKeySecret(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// keyHint is what the app shows of a key: its prefix and last four characters.
func keyHint(secret string) string {
	return secret[:len(keyPrefixLive)] + "…" + secret[len(secret)-4:]
}
