package command

import (
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// Commands about the user's own jobs as the benchmark (core_jobs.go).
const (
	KindJob     Kind = "job"
	KindCompare Kind = "compare"
)

// JobNameCmd names a span of a rental's life a run of the job Label:
// /job NAME LABEL FROM TO. Without From and To (both zero) it names the
// last job the rental's agent wrapped without a label.
type JobNameCmd struct {
	Name     string
	Label    string
	From, To time.Time // both zero, or From before To
}

// JobListCmd lists a rental's job runs: /job NAME.
type JobListCmd struct {
	Name string
}

// CompareCmd shows the user's own price/performance table: /compare, or
// one label's table: /compare LABEL.
type CompareCmd struct {
	Label string
}

func (JobNameCmd) Kind() Kind { return KindJob }
func (JobListCmd) Kind() Kind { return KindJob }
func (CompareCmd) Kind() Kind { return KindCompare }

// job reads /job NAME [LABEL [FROM TO]]; label=, from= and to= may be
// written as keys. FROM and TO take the chat's TIME forms ("14:05",
// "yesterday 22:00", "2h ago"); a bare clock later than now is
// yesterday's, as everywhere.
func (p *parser) job(toks []string) (Command, error) {
	if err := p.split(toks, []string{"name", "label", "from", "to"}, false); err != nil {
		return nil, err
	}
	words := p.words
	for _, k := range []string{"name", "label", "from", "to"} {
		v, ok := p.kv[k]
		if !ok {
			continue
		}
		pos := map[string]int{"name": 0, "label": 1, "from": 2, "to": 3}[k]
		if len(words) > pos && words[pos] != "" {
			return nil, p.err("twice", noun(k), quote(words[pos]), quote(v))
		}
		for len(words) <= pos {
			words = append(words, "")
		}
		words[pos] = v
	}
	if len(words) == 0 || words[0] == "" {
		return nil, p.err("missing_name", string(p.kind))
	}
	if len(words) > 4 {
		return nil, p.err("unexpected", quote(words[4]), string(p.kind))
	}
	name, err := p.rentalName(words[0])
	if err != nil {
		return nil, err
	}
	if len(words) == 1 {
		return JobListCmd{Name: name}, nil
	}
	label := words[1]
	if !ledger.ValidLabel(label) {
		return nil, p.err("job_bad_label", quote(label), strconv.Itoa(ledger.MaxLabelLen))
	}
	c := JobNameCmd{Name: name, Label: label}
	switch {
	case len(words) == 2:
		return c, nil
	case len(words) == 3 || words[2] == "" || words[3] == "":
		return nil, p.err("job_one_time", name, label)
	}
	if c.From, err = p.jobTime(words[2]); err != nil {
		return nil, err
	}
	if c.To, err = p.jobTime(words[3]); err != nil {
		return nil, err
	}
	if !c.To.After(c.From) {
		return nil, p.err("job_span_order", quote(words[2]), quote(words[3]), c.From.Format("2006-01-02 15:04"), c.To.Format("2006-01-02 15:04"))
	}
	if c.To.Sub(c.From) > ledger.MaxJobSpan {
		return nil, p.err("job_span_long", quote(words[2]), quote(words[3]), strconv.Itoa(int(ledger.MaxJobSpan/(24*time.Hour))))
	}
	return c, nil
}

// jobTime reads one end of a job's span: a TIME not in the future.
func (p *parser) jobTime(v string) (time.Time, error) {
	t, ok := parseTime(v, p.now, p.loc)
	if !ok {
		return time.Time{}, p.err("bad_time", quote(v))
	}
	if t.After(p.now.Add(futureSlack)) {
		return time.Time{}, p.err("future_time", quote(v), t.In(p.loc).Format("2006-01-02 15:04"))
	}
	if t.Year() < 2000 {
		return time.Time{}, p.err("old_time", quote(v))
	}
	return t.In(p.loc), nil
}

// compare reads /compare [LABEL].
func (p *parser) compare(toks []string) (Command, error) {
	if err := p.split(toks, []string{"label"}, false); err != nil {
		return nil, err
	}
	if v, ok := p.kv["label"]; ok {
		if len(p.words) > 0 {
			return nil, p.err("twice", noun("label"), quote(p.words[0]), quote(v))
		}
		p.words = []string{v}
	}
	switch len(p.words) {
	case 0:
		return CompareCmd{}, nil
	case 1:
	default:
		return nil, p.err("unexpected", quote(p.words[1]), string(p.kind))
	}
	l := strings.TrimSpace(p.words[0])
	if !ledger.ValidLabel(l) {
		return nil, p.err("job_bad_label", quote(l), strconv.Itoa(ledger.MaxLabelLen))
	}
	return CompareCmd{Label: l}, nil
}
