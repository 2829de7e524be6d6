package command

import (
	"strings"
)

// --- /help and /start --------------------------------------------------------

func (p *parser) help(toks []string) (Command, error) {
	if err := p.split(toks, nil, false); err != nil {
		return nil, err
	}
	if len(p.words) == 0 {
		return HelpCmd{}, nil
	}
	w := strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(p.words[0]), "/"), "／")
	if k, ok := commandNames[w]; ok {
		return HelpCmd{Topic: k}, nil
	}
	near := NearCommands(w)
	if k, ok := commandPrefix(w); ok && len(near) == 0 {
		near = []string{string(k)}
	}
	if len(near) > 0 {
		return nil, p.err("bad_topic_near", quote(p.words[0]), "/"+strings.Join(near, ", /"))
	}
	return nil, p.err("bad_topic", quote(p.words[0]))
}

func (p *parser) start(toks []string) (Command, error) {
	if len(toks) == 0 {
		return StartCmd{}, nil
	}
	if len(toks) > 1 {
		return nil, p.err("unexpected", quote(toks[1]), string(p.kind))
	}
	code := toks[0]
	if len(code) > 64 {
		return nil, p.err("bad_code", quote(code))
	}
	for _, r := range code {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return nil, p.err("bad_code", quote(code))
		}
	}
	if j, ok := strings.CutPrefix(code, joinPrefix); ok {
		if !validJoinCode(j) {
			return nil, p.err("team_bad_join_code", quote(j))
		}
		return StartCmd{Join: j}, nil
	}
	return StartCmd{Code: code}, nil
}

// commandPrefix finds the command whose word begins w, the longest such
// word of two letters or a Chinese one: "/help 租赁" means /rent (租),
// "/help rentals" /rent.
func commandPrefix(w string) (Kind, bool) {
	best, kind := "", Kind("")
	for name, k := range commandNames {
		if len(name) > len(best) && len(name) >= 2 && strings.HasPrefix(w, name) {
			best, kind = name, k
		}
	}
	return kind, best != ""
}
