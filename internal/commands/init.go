package commands

import "context"

// InitPrompt is what /init asks the model: a normal turn with a fixed
// instruction. The write goes through the permission dialog like any other.
const InitPrompt = `Write an AGENTS.md file for this project, in the working directory: the instructions a coding agent (you, in later sessions) needs to work here well.

First look at the project: README, build and dependency files, the layout, the tests, CI configuration, and an AGENTS.md or CLAUDE.md that is already there (improve it rather than start over; keep what is still right). Then write AGENTS.md with the Write tool (or change it with Edit), in markdown, at most about 150 lines, covering:
- what the project is, in two or three sentences;
- how to build, run, lint and test it: the exact commands, and how to run a single test;
- the layout: where the main parts live;
- the conventions the code follows that are not obvious from one file (style, error handling, naming, how tests are written);
- what is easy to get wrong here.
Be specific to this project and brief; leave out generic advice. Say only what you found in the project, not guesses. When it is written, say in two lines what it covers.`

func runInit(context.Context, *Registry, State, Invocation) (Result, error) {
	return Result{Action: ActionPrompt, Prompt: InitPrompt,
		Text: "Asking the model to write AGENTS.md (the write asks for your permission). gencode reads AGENTS.md when it starts: the new file applies from the next run."}, nil
}
