package main

import (
	"context"

	"interviewd/blobs"
	"interviewd/kv"
)

// dataOpening is the data folder being opened in the background (the blob store, then
// the bbolt file or the database) while start-up does what needs neither: the plugin
// host and the listener. On two cores the overlap takes a few percent off the time to
// the first answer. It starts once every flag has been checked, so a bad flag still
// never touches the data folder.
type dataOpening struct {
	done  chan struct{}
	blobs blobs.Store
	db    *kv.DB
	err   error
}

// openData starts opening the blob store spec names (DATA/blobs when empty) and the
// store in data with opts.
func openData(ctx context.Context, spec, data string, env func(string) (string, bool), opts kv.Options) *dataOpening {
	o := &dataOpening{done: make(chan struct{})}
	go func() {
		defer close(o.done)
		if o.blobs, o.err = openBlobs(ctx, spec, data, env); o.err != nil {
			return
		}
		opts.Blobs = o.blobs
		o.db, o.err = kv.Open(data, opts)
	}()
	return o
}

// wait returns what was opened, or why it could not be.
func (o *dataOpening) wait() (blobs.Store, *kv.DB, error) {
	<-o.done
	return o.blobs, o.db, o.err
}

// abandon is for a start-up that failed beside the opening with err: it waits for the
// opening, closes what it opened and returns its error if it failed too (the data
// folder's error comes first, as it did when the folder was opened before the rest),
// else err.
func (o *dataOpening) abandon(err error) error {
	<-o.done
	if o.db != nil {
		_ = o.db.Close()
	}
	if o.err != nil {
		return o.err
	}
	return err
}
