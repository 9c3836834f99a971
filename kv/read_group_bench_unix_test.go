//go:build unix

package kv

import (
	"context"
	"encoding/binary"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// BenchmarkReadOne is a study read as get_study sends it: one record, with a cached
// credential's check riding on it, from many goroutines at once (32 on two cores, as
// the nodes bench drives a node). Besides ns/op (wall-clock, which another process on
// the machine moves) it reports cpu-ns/op, the process's CPU time per read: the figure
// to compare the engines and the read paths by. On PostgreSQL it runs twice: Grouped
// (the read group, pgengine/read_group.go) and Alone (a statement per read), the comparison the
// read group must keep winning to stay.
func BenchmarkReadOne(b *testing.B) {
	b.Run("Grouped", func(b *testing.B) { benchmarkReadOne(b, false) })
	if testPostgres {
		b.Run("Alone", func(b *testing.B) { benchmarkReadOne(b, true) })
	}
}

func benchmarkReadOne(b *testing.B, alone bool) {
	db := mustOpenDB(b, nil)
	if alone {
		db.pg.SetUngrouped(true)
	}
	ctx := context.Background()
	org := NewV4()
	const records = 64
	value := make([]byte, 1500)
	err := db.update(ctx, func(tx Tx) error {
		bk, err := tx.CreateBucketIfNotExists(readGroupBucket)
		if err != nil {
			return err
		}
		for i := range records {
			if err := bk.Put(fmt.Appendf(nil, "k%d", i), value); err != nil {
				return err
			}
		}
		eb, err := tx.CreateBucketIfNotExists(bucketAuthEpochs)
		if err != nil {
			return err
		}
		return eb.Put(org[:], binary.BigEndian.AppendUint64(nil, 3))
	})
	if err != nil {
		b.Fatal(err)
	}
	keys := make([][]byte, records)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "k%d", i)
	}
	b.SetParallelism(16)
	b.ReportAllocs()
	before := processCPU(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			rctx, f := WithAuthFence(ctx)
			if !db.arm(rctx, org, 3, [32]byte{}, false) {
				b.Error("fence not armed")
				return
			}
			err := db.readOne(rctx, readGroupBucket, keys[i%records], func(v []byte) error {
				if len(v) != len(value) {
					return fmt.Errorf("read %d bytes, want %d", len(v), len(value))
				}
				return nil
			})
			f.Close()
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(processCPU(b)-before)/float64(b.N), "cpu-ns/op")
}

// processCPU returns the CPU time (user and system) the test process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// readGroupBucket holds the records BenchmarkReadOne reads.
var readGroupBucket = []byte("read_group_test")
