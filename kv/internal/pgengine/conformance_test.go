package pgengine

import (
	"testing"

	"interviewd/kv/internal/engine/enginetest"
)

func TestConformance(t *testing.T) { enginetest.Run(t, openEngine) }

func BenchmarkView(b *testing.B) { enginetest.BenchmarkView(b, openEngine) }
