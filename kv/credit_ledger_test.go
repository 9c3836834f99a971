package kv

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestCreditLedger: every grant and spend is a row of the history, written with the
// balance; paging is newest first and a cursor belongs to its organisation.
func TestCreditLedger(t *testing.T) {
	ctx := context.Background()
	clk := newClock(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	db := mustOpenDB(t, clk.now)
	org, _, err := db.CreateOrg(ctx, OrgInput{Name: "Ledger", Email: "owner@ledger.test", Credits: 2})
	if err != nil {
		t.Fatal(err)
	}
	other := mustOrg(t, db, "other")
	if _, err := db.AddCredits(ctx, org.ID, 3); err != nil {
		t.Fatal(err)
	}
	p := Partition{Org: org.ID, Env: EnvLive}
	st := mustStudy(t, db, p, "Pricing")
	if _, err := db.SetStudyMode(ctx, p, st.ID, ModeLive); err != nil {
		t.Fatal(err)
	}
	// One interview through each way of opening a link: both must spend through the ledger.
	var started []ID
	for i := range 2 {
		clk.add(time.Minute)
		var o Opened
		if i == 0 {
			o, err = db.OpenLink(ctx, st.LinkToken, fmt.Sprintf("s%d", i))
		} else {
			o, err = db.ResumeLinkOpening(ctx, st.LinkToken, "", fmt.Sprintf("s%d", i), nil)
		}
		if err != nil || !o.SpentCredit || o.Interview == nil {
			t.Fatalf("open %d: %+v %v", i, o, err)
		}
		started = append(started, o.Interview.ID)
	}
	// A test-environment study spends nothing and writes nothing.
	pt := Partition{Org: org.ID, Env: EnvTest}
	stt := mustStudy(t, db, pt, "Rehearsal")
	if _, err := db.SetStudyMode(ctx, pt, stt.ID, ModeLive); err != nil {
		t.Fatal(err)
	}
	if o, err := db.OpenLink(ctx, stt.LinkToken, "t"); err != nil || o.SpentCredit {
		t.Fatalf("test environment: %+v %v", o, err)
	}

	t.Run("OK_HistoryNewestFirst", func(t *testing.T) {
		page, err := db.FindCreditEntries(ctx, CreditFilter{OrgID: org.ID})
		if err != nil {
			t.Fatal(err)
		}
		type row struct {
			kind             CreditKind
			amount, balance  int
			interview, study string
		}
		var got []row
		for _, e := range page.Items {
			r := row{kind: e.Kind, amount: e.Amount, balance: e.Balance, study: e.StudyName}
			if e.InterviewID != nil {
				r.interview = e.InterviewID.String()
			}
			if e.StudyID != nil && *e.StudyID != st.ID {
				t.Errorf("spend of study %s, want %s", e.StudyID, st.ID)
			}
			got = append(got, r)
		}
		want := []row{
			{CreditSpend, -1, 3, started[1].String(), "Pricing"},
			{CreditSpend, -1, 4, started[0].String(), "Pricing"},
			{CreditGrant, 3, 5, "", ""},
			{CreditGrant, 2, 2, "", ""},
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || page.Next != "" {
			t.Fatalf("history\n got %v next %q\nwant %v", got, page.Next, want)
		}
		o, err := db.FindOrgByID(ctx, org.ID)
		if err != nil || o.Credits != page.Items[0].Balance {
			t.Fatalf("balance %d %v, history says %d", o.Credits, err, page.Items[0].Balance)
		}
	})

	t.Run("OK_Paging", func(t *testing.T) {
		first, err := db.FindCreditEntries(ctx, CreditFilter{OrgID: org.ID, Limit: 3})
		if err != nil || len(first.Items) != 3 || first.Next == "" {
			t.Fatalf("first page: %d rows next %q %v", len(first.Items), first.Next, err)
		}
		second, err := db.FindCreditEntries(ctx, CreditFilter{OrgID: org.ID, Limit: 3, Cursor: first.Next})
		if err != nil || len(second.Items) != 1 || second.Next != "" || second.Items[0].Amount != 2 {
			t.Fatalf("second page: %+v %v", second, err)
		}
	})

	t.Run("ErrCursorOfAnotherOrg", func(t *testing.T) {
		first, err := db.FindCreditEntries(ctx, CreditFilter{OrgID: org.ID, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.FindCreditEntries(ctx, CreditFilter{OrgID: other.ID, Cursor: first.Next}); ErrorCode(err) != EINVALID {
			t.Fatalf("another organisation's cursor: %v, want EINVALID", err)
		}
	})

	t.Run("OK_NegativeGrantRecorded", func(t *testing.T) {
		if _, err := db.AddCredits(ctx, org.ID, -1); err != nil {
			t.Fatal(err)
		}
		page, err := db.FindCreditEntries(ctx, CreditFilter{OrgID: org.ID, Limit: 1})
		if err != nil || page.Items[0].Kind != CreditGrant || page.Items[0].Amount != -1 || page.Items[0].Balance != 2 {
			t.Fatalf("correction: %+v %v", page.Items, err)
		}
	})
}

// TestCreditAlert: only an owner sets the threshold; the spend that takes the balance
// under it (and only that one) leaves one alert for the owners, which one sender at a
// time holds until it is done.
func TestCreditAlert(t *testing.T) {
	ctx := context.Background()
	clk := newClock(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	db := mustOpenDB(t, clk.now)
	org, owner, admin, member := team(t, db)
	second, err := db.AddMember(ctx, org.ID, "second@acme.test", RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddCredits(ctx, org.ID, 4); err != nil {
		t.Fatal(err)
	}

	t.Run("ErrNotOwner", func(t *testing.T) {
		for _, u := range []User{admin, member} {
			if _, err := db.SetCreditAlert(ctx, CreditAlertInput{OrgID: org.ID, Actor: u.ID, Below: 3}); ErrorCode(err) != EFORBIDDEN {
				t.Errorf("%s: %v, want EFORBIDDEN", u.Email, err)
			}
		}
	})
	t.Run("ErrOutOfRange", func(t *testing.T) {
		for _, n := range []int{-1, MaxCreditAlertBelow + 1} {
			if _, err := db.SetCreditAlert(ctx, CreditAlertInput{OrgID: org.ID, Actor: owner.ID, Below: n}); ErrorCode(err) != EINVALID {
				t.Errorf("below %d: %v, want EINVALID", n, err)
			}
		}
	})
	if o, err := db.SetCreditAlert(ctx, CreditAlertInput{OrgID: org.ID, Actor: owner.ID, Below: 3}); err != nil || o.CreditAlertBelow != 3 || o.LowCredits() {
		t.Fatalf("set: %+v %v", o, err)
	}

	p := Partition{Org: org.ID, Env: EnvLive}
	st := mustStudy(t, db, p, "Alerts")
	if _, err := db.SetStudyMode(ctx, p, st.ID, ModeLive); err != nil {
		t.Fatal(err)
	}
	var alerts []bool
	for i := range 4 { // 4 → 3 → 2 (crosses under 3) → 1 → 0
		o, err := db.OpenLink(ctx, st.LinkToken, fmt.Sprintf("s%d", i))
		if err != nil || !o.SpentCredit {
			t.Fatalf("open %d: %+v %v", i, o, err)
		}
		alerts = append(alerts, o.CreditAlert)
	}
	if fmt.Sprint(alerts) != "[false true false false]" {
		t.Fatalf("alert per spend %v, want only the one under 3", alerts)
	}
	if o, err := db.FindOrgByID(ctx, org.ID); err != nil || !o.LowCredits() {
		t.Fatalf("low credits: %+v %v", o, err)
	}

	claimed, err := db.ClaimCreditAlerts(ctx)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %+v %v", claimed, err)
	}
	a := claimed[0]
	if a.OrgID != org.ID || a.OrgName != "Acme" || a.Balance != 2 || a.Threshold != 3 ||
		!slices.Equal(slices.Sorted(slices.Values(a.Owners)), slices.Sorted(slices.Values([]string{owner.Email, second.Email}))) {
		t.Fatalf("alert %+v", a)
	}
	if again, err := db.ClaimCreditAlerts(ctx); err != nil || len(again) != 0 {
		t.Fatalf("claimed twice: %+v %v", again, err)
	}
	clk.add(creditAlertLease + time.Second) // the sender died: offered again
	again, err := db.ClaimCreditAlerts(ctx)
	if err != nil || len(again) != 1 || !again[0].At.Equal(a.At) {
		t.Fatalf("after the lease: %+v %v", again, err)
	}
	if err := db.DoneCreditAlert(ctx, again[0]); err != nil {
		t.Fatal(err)
	}
	clk.add(creditAlertLease + time.Second)
	if left, err := db.ClaimCreditAlerts(ctx); err != nil || len(left) != 0 {
		t.Fatalf("after done: %+v %v", left, err)
	}

	t.Run("OK_GrantRearms", func(t *testing.T) {
		if _, err := db.AddCredits(ctx, org.ID, 3); err != nil { // 0 → 3: not low
			t.Fatal(err)
		}
		o, err := db.OpenLink(ctx, st.LinkToken, "after-grant") // 3 → 2: under again
		if err != nil || !o.CreditAlert {
			t.Fatalf("after a grant: %+v %v", o, err)
		}
		if got, err := db.ClaimCreditAlerts(ctx); err != nil || len(got) != 1 || got[0].Balance != 2 {
			t.Fatalf("claim: %+v %v", got, err)
		}
	})
}
