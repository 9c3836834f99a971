package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"interviewd/kv"
)

// topic is the raw material of a seeded brief. Seeded studies read like real ones, so
// response bodies have production sizes (a detail body of about 1.5 KB).
type topic struct {
	audience string // who is interviewed, plural
	subject  string // what the study is about
	moment   string // the decisive moment to ask about
}

var topics = []topic{
	{"independent bakery owners", "card payment terminals", "the last time they changed payment provider"},
	{"first-time home buyers", "mortgage comparison tools", "the week they chose a lender"},
	{"secondary school teachers", "homework tracking apps", "setting homework for a new class"},
	{"hospital ward nurses", "shift handover notes", "the most recent handover that went wrong"},
	{"small logistics firms", "route planning software", "a day when deliveries ran late"},
	{"freelance translators", "invoicing and late payments", "chasing their most overdue invoice"},
	{"parents of toddlers", "grocery delivery subscriptions", "the last time an order arrived incomplete"},
	{"amateur cyclists", "bike maintenance services", "their most recent repair"},
	{"community pharmacists", "repeat prescription ordering", "a busy Monday morning at the counter"},
	{"restaurant managers", "staff scheduling", "building next week's rota"},
	{"retired volunteers", "charity sign-up forms", "the first time they volunteered online"},
	{"game developers in small studios", "crash reporting tools", "the last release that shipped a crash"},
}

// briefFor returns the i-th seeded brief: a title, 3 objectives, 2 screener questions
// and 6 verbatim questions.
func briefFor(i int) kv.Brief {
	t := topics[i%len(topics)]
	title := fmt.Sprintf("How %s decide about %s (wave %d)", t.audience, t.subject, i/len(topics)+1)
	minutes := []int{20, 30, 45}[i%3]
	return kv.Brief{
		Title: &title,
		Objectives: []string{
			fmt.Sprintf("Understand how %s currently handle %s and what triggers a change.", t.audience, t.subject),
			fmt.Sprintf("Map the people, tools and costs involved around %s.", t.moment),
			fmt.Sprintf("Identify the unmet needs that would make %s worth switching for.", t.subject),
		},
		PreInterviewQuestions: []string{
			fmt.Sprintf("Are you one of the %s we are looking for, and for how long?", t.audience),
			fmt.Sprintf("Have you been personally involved in decisions about %s in the past 12 months?", t.subject),
		},
		VerbatimQuestions: []string{
			fmt.Sprintf("Tell me about your role and how %s fits into a typical week.", t.subject),
			fmt.Sprintf("Walk me through %s, step by step.", t.moment),
			"What was the hardest part of that, and why?",
			"Who else had a say, and what did they care about most?",
			"If you could change one thing about how this works today, what would it be?",
			"Is there anything I should have asked but didn't?",
		},
		EstimatedDurationMinutes: &minutes,
	}
}

// seedStudies creates n studies in p directly through kv and returns their ids, oldest
// first. It returns the first error kv reports.
func seedStudies(ctx context.Context, db *kv.DB, p kv.Partition, n int) ([]string, error) {
	ids := make([]string, 0, n)
	for i := range n {
		id, err := seedStudy(ctx, db, p, i)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// seedStudy creates the i-th seeded study in p and returns its id.
func seedStudy(ctx context.Context, db *kv.DB, p kv.Partition, i int) (string, error) {
	s, err := db.CreateStudy(ctx, kv.StudyInput{Partition: p, Brief: briefFor(i), Guidance: "Seeded by the load-test suite."})
	if err != nil {
		return "", fmt.Errorf("seed study %d: %w", i, err)
	}
	return s.ID.String(), nil
}

// seedWriters is how many studies seedStudiesConcurrently creates at once. kv offers no
// batch of creations, but its group commit puts concurrent writers in one transaction,
// so this many writers make commits of up to this many studies each.
const seedWriters = 64

// seedStudiesConcurrently is seedStudies with seedWriters creations in flight, for big
// folders: study i is still briefFor(i), but creation order (and so age) only roughly
// follows i. It returns the first error kv reports.
func seedStudiesConcurrently(ctx context.Context, db *kv.DB, p kv.Partition, n int) error {
	var (
		next   atomic.Int64
		failed atomic.Bool
		wg     sync.WaitGroup
		errs   = make([]error, seedWriters)
	)
	for w := range seedWriters {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && !failed.Load(); i = int(next.Add(1) - 1) {
				if _, errs[w] = seedStudy(ctx, db, p, i); errs[w] != nil {
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
