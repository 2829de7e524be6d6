package bot

import (
	"bytes"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// Questions read the ledger and change nothing: each computes its answer,
// then records the update's key (answer) so a redelivery is not answered
// twice, then replies.

// reports is the family of the questions about the ledger: /status,
// /spend, /summary, /export and /dashboard (core_dashboard.go).
type reports struct{ *req }

func (reports) register(t *table) {
	on(t, reports.status)
	on(t, reports.spend)
	on(t, reports.summary)
	on(t, reports.export)
	on(t, reports.dashboard)
}

func (r reports) status(command.StatusCmd) error {
	b, err := r.book()
	if err != nil {
		return err
	}
	return r.answer(r.withDashboard(r.plain(view.RenderStatus(b, r.now, r.lang))))
}

func (r reports) spend(c command.SpendCmd) error {
	b, err := r.book()
	if err != nil {
		return err
	}
	from, to := c.From, c.To
	if from.IsZero() || to.IsZero() {
		from, to = ledger.MonthRange(r.now, r.loc)
	}
	if to.After(r.now) {
		to = r.now
	}
	if from.After(to) {
		from = to
	}
	period := c.Period
	if period == "" {
		period = "month"
	}
	fromText, toText := r.periodEnds(from, to)
	head := r.t("spend_head", r.t("period_"+period), fromText, toText)
	if period[0] >= '0' && period[0] <= '9' { // YYYY-MM, a day or a range of days, as written
		head = r.t("spend_head", period, fromText, toText)
	}
	text := head + "\n" + view.RenderSpend(b, from, to, r.lang)
	split, err := r.teamSplit(ledger.Spend(b, from, to))
	if err != nil {
		return err
	}
	text += split
	if mf, _ := ledger.MonthRange(r.now, r.loc); !from.Before(mf) {
		text += "\n" + view.RenderBudget(b, r.now, r.lang)
	}
	return r.answer(r.withDashboard(r.plain(text)))
}

func (r reports) summary(command.SummaryCmd) error {
	b, err := r.book()
	if err != nil {
		return err
	}
	text := view.Summary(b, r.now, r.lang, r.reconciliations())
	if r.team != nil {
		// The month to date by person and by project, as the nightly
		// team summary splits it, in the team ledger's zone.
		monthStart, _ := ledger.MonthRange(r.now, b.User.Location())
		split, err := r.teamSplit(ledger.Spend(b, monthStart, r.now))
		if err != nil {
			return err
		}
		if split != "" {
			text += "\n\n" + r.t("summary_team_month") + split
		}
	}
	if err := r.answer(r.withDashboard(r.plain(text))); err != nil || r.c.chart == nil {
		return err
	}
	// The chart follows, as after the nightly summary; a chart that
	// cannot be drawn is logged, the summary stands.
	chart, err := r.c.chart(b, r.now)
	if err != nil {
		r.c.log.Error("/summary: chart", "user", r.u.UserID, "err", err)
		return nil
	}
	return r.send(chat.Outgoing{ChatID: r.u.ChatID, Text: r.t("chart_caption"), Photo: chart})
}

// reconciliations are the summary's reconciliation of each connected
// platform for the month so far, as the nightly summary has them; nil
// when none is connected or they cannot be read (logged: the summary
// stands without them).
func (r reports) reconciliations() []ledger.Reconciliation {
	if r.c.conns == nil {
		return nil
	}
	from, ok := view.MonthSoFar(r.now, r.loc)
	if !ok {
		return nil
	}
	rs, err := r.c.conns.Reconcile(r.ctx, r.ledgerID, from, r.now)
	if err != nil {
		r.c.log.Error("/summary: reconcile", "user", r.u.UserID, "err", err)
		return nil
	}
	return rs
}

// export sends the ledger as of now as a CSV or JSON document.
func (r reports) export(c command.ExportCmd) error {
	b, err := r.book()
	if err != nil {
		return err
	}
	opts, err := r.exportTeam()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	ext := "csv"
	if c.Format == "json" {
		ext = "json"
		// The JSON export carries each rental's bench and job runs, which
		// the book leaves out; the CSV has no column for them.
		if err := ledger.LoadDelivered(r.ctx, b, r.c.jobStore()); err != nil {
			return err
		}
		err = ledger.WriteExportJSON(&buf, b, r.now, opts...)
	} else {
		err = ledger.WriteExportCSV(&buf, b, r.now, opts...)
	}
	if err != nil {
		return err
	}
	name := "gpuledger-" + r.now.In(r.loc).Format("2006-01-02") + "." + ext
	if r.team != nil {
		name = "gpuledger-" + r.team.Team.Name + "-" + r.now.In(r.loc).Format("2006-01-02") + "." + ext
	}
	if err := r.mark(); err != nil {
		return err
	}
	return r.send(chat.Outgoing{
		ChatID:   r.u.ChatID,
		Text:     r.t("exported", r.now.In(r.loc).Format(time.DateTime)),
		Document: &chat.File{Name: name, Data: buf.Bytes()},
	})
}
