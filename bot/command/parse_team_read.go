package command

// team reads /team and its subcommands.
func (p *parser) team(toks []string) (Command, error) {
	return nil, p.err("unknown_command", quote("/team"))
}

// use reads /use TEAM | me.
func (p *parser) use(toks []string) (Command, error) {
	return nil, p.err("unknown_command", quote("/use"))
}

// project reads /project [NAME | none].
func (p *parser) project(toks []string) (Command, error) {
	return nil, p.err("unknown_command", quote("/project"))
}
