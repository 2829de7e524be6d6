package bot

// The commands about a rental's agent: /agent (its token and install
// line), /why (what the agent and the automatic actions saw and decided)
// and /autorelease (the policy of those actions).

import (
	"context"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// agents is the family of the rentals' agents: /agent (a rental's token,
// an enrolment, its revocation), /adopt (core_enrol.go), /why and
// /autorelease.
type agents struct{ *req }

func (agents) register(t *table) {
	on(t, agents.agent)
	on(t, agents.agentEnrol)
	on(t, agents.agentRevoke)
	on(t, agents.adopt)
	on(t, agents.why)
	on(t, agents.autoRelease)
}

func (r agents) agent(c command.AgentCmd) error {
	if r.c.agents == nil {
		return r.answer(r.plain(r.t("agent_off")))
	}
	x, err := r.liveRental(c.Name, "")
	if err != nil {
		return err
	}
	// A new token revokes the rental's earlier one, on which its agent
	// may run: on a team only its owner or an admin may issue it.
	if err := r.mayChange(x); err != nil {
		return err
	}
	// The key is recorded first: a redelivered /agent must not issue a
	// second token.
	if err := r.mark(); err != nil {
		return err
	}
	if r.priv.on {
		// Asked in a group: issuing revokes the rental's earlier token,
		// which an agent may still run on, so the private chat must be
		// known to be open before a token is issued.
		if err := r.send(r.plain(r.t("agent_private_head", c.Name))); err != nil || !r.priv.sent {
			return err
		}
	}
	tok, err := r.c.agents.IssueBy(r.ctx, r.ledgerID, r.act().By, c.Name)
	if err != nil {
		return err
	}
	text := r.t("agent_token", c.Name, r.installLine(tok))
	if w := r.unreachableURL(); w != "" {
		text += "\n\n" + w
	}
	// The token is issued even when the binary is missing: it stays
	// valid, and the same command works once the binary is in place.
	if r.c.downloads != nil {
		if path, err := r.c.downloads.AgentBinary(); err != nil {
			r.c.log.Info("/agent: the agent binary cannot be downloaded", "err", err)
			text += "\n\n" + r.t("agent_no_binary", path)
		}
	}
	return r.send(r.plain(text))
}

// unreachableURL is the warning an install line gets when the server's
// public URL is one no rented host can reach (urlReach): loopback,
// localhost or an unspecified address (the default GPULEDGER_PUBLIC_URL
// of a server listening on :8477 is http://127.0.0.1:8477), or a private
// or link-local one, reachable only inside its own network. "" when the
// URL may be reached from anywhere. The warning says how to give one that
// works: GPULEDGER_PUBLIC_URL behind a tunnel or a proxy.
func (r agents) unreachableURL() string {
	switch reach, port := urlReach(r.c.publicURL); reach {
	case reachLocal:
		return r.t("agent_url_local", r.c.publicURL, port)
	case reachPrivate:
		return r.t("agent_url_private", r.c.publicURL, port)
	}
	return ""
}

func (r agents) why(c command.WhyCmd) error {
	x, err := r.named(c.Name)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		return ledger.Errorc(ledger.ENOTFOUND, "no_rental_called", c.Name)
	}
	if err != nil {
		return err
	}
	var ds []ledger.Decision
	if st := r.c.policies; st != nil {
		if ds, err = st.Decisions(r.ctx, x.ID, 10); err != nil {
			return err
		}
	}
	name := r.shown(c.Name, x) // by its address when another rental has its name
	now := r.whyNow(x, name)
	if len(ds) == 0 && now == "" {
		return r.answer(r.plain(r.t("why_none", name)))
	}
	var sb strings.Builder
	sb.WriteString(now)
	if len(ds) == 0 {
		sb.WriteString("\n" + r.t("why_none", name))
		return r.answer(r.plain(sb.String()))
	}
	if now != "" {
		sb.WriteString("\n\n")
	}
	sb.WriteString(r.t("why_head", name))
	for _, d := range ds {
		summary, evidence := r.decisionText(d.SummaryMsg, d.Summary), r.decisionText(d.EvidenceMsg, d.Evidence)
		sb.WriteString("\n" + chat.Escape(r.when(d.At)) + " · " + chat.Escape(summary))
		if evidence != "" {
			sb.WriteString("\n   <i>" + chat.Escape(evidence) + "</i>")
		}
	}
	return r.answer(r.plain(sb.String()))
}

// agentReportsWithin is how recently a rental's agent must have been
// heard for a release to say that its instance is still up: a few of its
// 30-second heartbeats.
const agentReportsWithin = 2 * time.Minute

// releasedStillReports is what the reply to a release adds when the
// rental's agent reported a moment ago: the instance is still up, and
// billing on the platform unless it was released there too. The release
// revoked the agent's token; an agent that runs on is told of once
// (ledger.ReportedAfterRelease, the "release not confirmed" card),
// and an enrolled one, back on its enrolment token, is not offered as a
// new instance until it starts again (hub.releasedStillUp). "" when the
// agent was not heard lately.
func (r agents) releasedStillReports(x *ledger.Rental) string {
	ag := r.c.states
	if ag == nil || x == nil {
		return ""
	}
	st, seen := ag.AgentState(x.ID)
	if !seen || st.LastSeen.IsZero() || r.now.Sub(st.LastSeen) > agentReportsWithin || st.LastSeen.After(r.now.Add(time.Minute)) {
		return ""
	}
	pname := ""
	if _, ok := ledger.LookupProfile(x.Platform); ok {
		pname = view.PlatformName(r.lang, x.Platform)
	}
	if pname == "" {
		pname = r.t("its_platform")
	}
	ago := chat.FormatDuration(max(r.now.Sub(st.LastSeen), 0).Truncate(time.Second), r.lang)
	text := r.t("release_agent_reports", r.label(x), ago, pname)
	if r.c.enrol != nil {
		text += " " + r.t("release_agent_reports_enrolled")
	}
	return text
}

// decisionText is a decision-log message in the reader's language, with
// its times in their zone now; a decision recorded without one (before
// messages were kept) shows its stored English text as it is.
func (r agents) decisionText(m ledger.Message, stored string) string {
	if t, ok := view.DecisionText(m, r.lang, r.loc, r.now); ok {
		return t
	}
	return stored
}

// whyNow is the head of /why: the rental's automatic action and who it
// waits for, and who its agent last saw connected, with whether that
// holds the action, naming x as name. "" when there are neither policies
// nor agent states.
func (r agents) whyNow(x *ledger.Rental, name string) string {
	var lines []string
	pol := ledger.AutoPolicy{Action: ledger.AutoNotify}
	if st := r.c.policies; st != nil {
		p, err := st.AutoPolicy(r.ctx, x.ID)
		if err != nil {
			r.c.log.Error("bot: auto policy", "rental", x.ID, "err", err)
		} else {
			pol = p
		}
		auto := pol.Action == ledger.AutoStop || pol.Action == ledger.AutoRelease
		if auto {
			lines = append(lines, r.t("why_policy", name, view.ActionWord(r.lang, pol.Action), chat.FormatDuration(pol.Grace(), r.lang), pol.WaitFor.String()))
			lines = append(lines, chat.Escape(r.wayText(x, pol.Action)))
		} else {
			lines = append(lines, r.t("why_policy_"+string(pol.Action), name))
		}
	}
	if ag := r.c.states; ag != nil {
		if st, seen := ag.AgentState(x.ID); seen {
			if st.Verdict == ledger.VerdictBusy && st.Work != "" {
				lines = append(lines, r.t("why_working", st.Work, r.when(st.LastSeen)))
			}
			switch held, idle := pol.Holding(st.Sessions, r.now); {
			case len(st.Sessions) == 0:
				lines = append(lines, r.t("why_nobody", r.when(st.LastSeen)))
			case (pol.Action == ledger.AutoStop || pol.Action == ledger.AutoRelease) && len(held) == 0 && len(idle) > 0:
				lines = append(lines, r.t("why_people_idle", chat.RawHTML(view.SessionsText(r.lang, st.Sessions)), r.when(st.LastSeen),
					chat.FormatDuration(r.now.Sub(lastActive(idle)).Truncate(time.Minute), r.lang), view.ActionWord(r.lang, pol.Action)))
			case (pol.Action == ledger.AutoStop || pol.Action == ledger.AutoRelease) && len(held) > 0:
				lines = append(lines, r.t("why_people_held", chat.RawHTML(view.SessionsText(r.lang, st.Sessions)), r.when(st.LastSeen), view.ActionWord(r.lang, pol.Action)))
			default:
				lines = append(lines, r.t("why_people", chat.RawHTML(view.SessionsText(r.lang, st.Sessions)), r.when(st.LastSeen)))
			}
			if st.PolicyRefused != "" {
				lines = append(lines, chat.Escape(view.PolicyRefusedText(r.lang, name, st.PolicyRefusedCode, st.PolicyRefused)))
			}
		}
	}
	return strings.Join(lines, "\n")
}

// lastActive is the latest activity among ss.
func lastActive(ss []ledger.Session) time.Time {
	var t time.Time
	for _, s := range ss {
		if s.ActiveAt.After(t) {
			t = s.ActiveAt
		}
	}
	return t
}

func (r agents) autoRelease(c command.AutoReleaseCmd) error {
	st := r.c.policies
	if st == nil {
		return r.answer(r.plain(r.t("autorelease_off")))
	}
	p := ledger.AutoPolicy{Action: c.Action, After: c.After, WaitFor: c.WaitFor, IdlePeople: c.IdlePeople, SetAt: r.now}
	if err := p.Validate(); err != nil {
		return err
	}
	if err := r.adminOnly(); err != nil {
		return err // a team's auto-release policies are its admins'
	}
	// Policies are not journaled with a key: record the key first, so a
	// redelivery does not set it twice.
	if err := r.mark(); err != nil {
		return err
	}
	got, err := st.SetAutoPolicy(r.ctx, r.ledgerID, c.Name, p)
	if err != nil {
		return err
	}
	var text string
	switch got.Action {
	case ledger.AutoOff:
		text = r.t("autorelease_none", c.Name)
	case ledger.AutoNotify:
		text = r.t("autorelease_notify", c.Name)
	default:
		text = r.autoActionText(c.Name, got)
		if got.WaitFor == ledger.WaitNone {
			text += "\n" + r.t("autorelease_wait_none")
		} else {
			text += "\n" + r.t("autorelease_wait_for", got.WaitFor.String(), c.Name, string(got.Action))
			if b := got.PeopleBound(); b > 0 {
				text += " " + r.t("autorelease_idle_people", chat.FormatDuration(b, r.lang))
			} else {
				text += " " + r.t("autorelease_idle_people_none")
			}
		}
	}
	return r.send(r.plain(text))
}

// autoActionText says what an automatic stop or release will do to the
// rental: when (the idle warning after the user's idle_warn, then the
// grace period), what the ledger records, and, for a stop, what the
// platform's profile says a stopped instance costs or risks. Both run the
// agent's release command; stop is preferred (DESIGN.md section 7), so a
// release says how to choose stop instead. The policy stays as chosen:
// the profiles do not say which platforms can stop at all.
//
// On a rental live on a connected platform the action goes through the
// platform's API, and only as far as the rental's agent has shown it runs
// on the instance (ledger.PlanAuto): the reply says which, or that the
// idle card will ask first and why.
func (r agents) autoActionText(name string, p ledger.AutoPolicy) string {
	warn := r.lu.Settings.IdleWarnAfter()
	grace, after := chat.FormatDuration(p.Grace(), r.lang), chat.FormatDuration(warn, r.lang)
	x, err := r.named(name)
	how := ""
	if err == nil {
		if w := r.autoWay(x, p.Action); w.Kind != ledger.WayAgent {
			how = "\n" + chat.Escape(view.WayText(r.lang, x.Name, w, false))
		}
	}
	if p.Action == ledger.AutoRelease {
		if how != "" {
			return r.t("autorelease_release_api", name, grace, after) + how
		}
		return r.t("autorelease_release", name, grace, after)
	}
	text := r.t("autorelease_stop", name, grace, after)
	if how != "" {
		text = r.t("autorelease_stop_api", name, grace, after) + how
	}
	if err != nil {
		return text
	}
	prof, ok := ledger.LookupProfile(x.Platform)
	if !ok {
		return text
	}
	pname := view.PlatformName(r.lang, prof.Key)
	if prof.Storage.BilledWhileStopped {
		text += "\n" + r.t("autorelease_stop_storage", pname)
	}
	if prof.ReleaseAfterStopped > 0 {
		text += "\n" + r.t("autorelease_stop_deadline", pname, chat.FormatDuration(prof.ReleaseAfterStopped, r.lang))
	}
	return text
}

// AutoWays says how an automatic stop or release of a rental would be
// carried out (connsync.Syncer implements it). The core asks its
// Connections for it when they have it; otherwise every rental's is its
// agent's.
type AutoWays interface {
	AutoWay(ctx context.Context, r *ledger.Rental, action ledger.AutoAction) ledger.AutoWay
}

// autoWay is how an automatic action of x would be carried out.
func (r agents) autoWay(x *ledger.Rental, action ledger.AutoAction) ledger.AutoWay {
	if w, ok := r.c.conns.(AutoWays); ok && x != nil {
		return w.AutoWay(r.ctx, x, action)
	}
	return ledger.AutoWay{Kind: ledger.WayAgent}
}

// wayText is /why's line on how the automatic action will be carried
// out: through the platform's API, a question first and why, or the
// agent's own release command.
func (r agents) wayText(x *ledger.Rental, action ledger.AutoAction) string {
	canRelease := false
	if ag := r.c.states; ag != nil {
		st, seen := ag.AgentState(x.ID)
		canRelease = seen && st.CanRelease
	}
	return view.WayText(r.lang, x.Name, r.autoWay(x, action), canRelease)
}

// hadToken reports whether the user's rental x (nil: it could not be
// read) ever had an agent token. When the store cannot tell, it answers
// true: saying a token stays revoked is harmless, missing it when there
// was one is not.
func (r agents) hadToken(x *ledger.Rental) bool {
	st := r.c.tokens
	if st == nil || x == nil {
		return true
	}
	had, err := st.TokenIssued(r.ctx, r.ledgerID, x.ID)
	if err != nil {
		r.c.log.Error("bot: token issued", "user", r.u.UserID, "err", err)
		return true
	}
	return had
}
