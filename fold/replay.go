package fold

import (
	"context"
	"encoding/json"
	"errors"
)

// A Replay folds a page's views from nothing over records handed to it,
// as the keeper folds them (the same filters, the same pool and limits),
// keeping nothing: for checking a view receipt, where the records are read
// by the caller (the history as the files hold it, or as a commit held it).
type Replay struct {
	pool  *Pool
	page  Page
	Views json.RawMessage
	// Stall is why the views stopped, once they did; they fold no more.
	Stall *Stall
}

// NewReplay starts a replay of page's views from {}.
func NewReplay(pool *Pool, page Page) (*Replay, error) {
	if page.Program == nil {
		return nil, errors.New("fold: a replay needs a program")
	}
	page.Program.init()
	return &Replay{pool: pool, page: page, Views: json.RawMessage(`{}`)}, nil
}

// Fold folds the events among recs the page's filters take over the views.
func (r *Replay) Fold(ctx context.Context, recs []Event) error {
	if r.Stall != nil {
		return nil
	}
	events := r.page.take(recs, func(Event, string) {})
	if len(events) == 0 {
		return nil
	}
	res, err := r.pool.Fold(ctx, r.page.Program, r.Views, events)
	if err != nil {
		return err
	}
	r.Views, r.Stall = res.Views, res.Stall
	return nil
}

// Copy is a replay that goes on from where r is, apart from it.
func (r *Replay) Copy() *Replay {
	c := *r
	return &c
}
