package sessionbench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// CPURange is the CPU per turn of turns From..To: the mean, and the
// median, which a busy machine disturbs less (the growth target uses it).
type CPURange struct {
	From, To     int
	Mean, Median time.Duration
}

// CPUByRange averages the turns' CPU over ranges of sc.CPURange turns; the
// recall question is left out.
func (r Result) CPUByRange() []CPURange {
	width := r.Scenario.cpuRange()
	var out []CPURange
	for from := 1; from <= r.Scenario.Turns; from += width {
		to := min(from+width-1, r.Scenario.Turns)
		if c, ok := cpuOf(r.Turns, from, to); ok {
			out = append(out, c)
		}
	}
	return out
}

// BaselineCPU is the CPU per turn of the baseline's turns (Scenario.Baseline).
func (r Result) BaselineCPU() (CPURange, bool) {
	return cpuOf(r.Baseline, 1, len(r.Baseline))
}

// cpuOf is the mean and median CPU of turns from..to.
func cpuOf(turns []Turn, from, to int) (CPURange, bool) {
	var sum time.Duration
	var cpu []time.Duration
	for _, t := range turns {
		if t.N >= from && t.N <= to {
			sum += t.CPU
			cpu = append(cpu, t.CPU)
		}
	}
	n := len(cpu)
	if n == 0 {
		return CPURange{}, false
	}
	slices.Sort(cpu)
	med := cpu[n/2]
	if n%2 == 0 {
		med = (cpu[n/2-1] + cpu[n/2]) / 2
	}
	return CPURange{From: from, To: to, Mean: sum / time.Duration(n), Median: med}, true
}

// CPUGrowth is the last range's median CPU per turn over the first's: over
// the baseline's, the first range played side by side with the last, when
// there is one.
func (r Result) CPUGrowth() float64 {
	ranges := r.CPUByRange()
	if len(ranges) < 2 {
		return 1
	}
	first := ranges[0]
	if b, ok := r.BaselineCPU(); ok {
		first = b
	}
	if first.Median <= 0 {
		return 1
	}
	return float64(ranges[len(ranges)-1].Median) / float64(first.Median)
}

// Target is one goal a scenario is checked against.
type Target struct {
	What string
	Got  string
	Want string
	OK   bool
}

// Targets are the goals for the scenario: at its full length, billed at
// a 10% cached price at most half of Crush's and uncached at most 0.7 of
// Crush's (issue 30; CrushReference); for B the total prompt tokens, for
// the long one the CPU per turn staying flat (issue 11); for all,
// correctness.
func (r Result) Targets() []Target {
	b := r.Bill
	var ts []Target
	num := func(what string, got, limit float64) {
		ts = append(ts, Target{What: what, Got: fmt.Sprintf("%.0f", got), Want: fmt.Sprintf("<= %.0f", limit), OK: got <= limit})
	}
	zero := func(what string, got int) {
		ts = append(ts, Target{What: what, Got: fmt.Sprint(got), Want: "0", OK: got == 0})
	}
	if c, ok := CrushReference(r.Scenario); ok {
		share := func(what string, got float64, crush int, limit float64) {
			x := got / float64(crush)
			ts = append(ts, Target{What: what, Got: fmt.Sprintf("%.0f (%.2fx Crush)", got, x),
				Want: fmt.Sprintf("<= %.2fx Crush's %s", limit, thousands(crush)), OK: x <= limit})
		}
		share("billed at a 10% cached price", b.Billed(0.1), c.Billed10, crushBilledShare)
		share("uncached prompt tokens", float64(b.Uncached()), c.Uncached, crushUncachedShare)
	}
	if r.Scenario.Name == "B" {
		num("total prompt tokens", float64(b.Prompt), 1390000)
	}
	if r.Scenario.Name == "long" {
		g := r.CPUGrowth()
		ts = append(ts, Target{What: "CPU per turn, last range / first", Got: fmt.Sprintf("%.2fx", g), Want: "<= 1.15x", OK: g <= 1.15})
	}
	zero("requests over the window", b.OverWindow)
	zero("tool-call pairing violations", b.RuleViolations)
	zero("failed turns", r.Failed())
	if r.Scenario.FactTurn > 0 {
		got := "no"
		if r.Recalled {
			got = "yes"
		}
		ts = append(ts, Target{What: "early fact recalled", Got: got, Want: "yes", OK: r.Recalled})
	}
	return ts
}

// Write prints the result as a table a person reads.
func (r Result) Write(w io.Writer) {
	sc, b := r.Scenario, r.Bill
	fmt.Fprintf(w, "scenario %s: %d turns (user ~%d words, answer ~%d words)", sc.Name, sc.Turns, sc.UserWords, sc.AnswerWords)
	if sc.Seed != 0 {
		fmt.Fprintf(w, ", held-out text (seed %d)", sc.Seed)
	}
	if sc.FactTurn > 0 {
		fmt.Fprintf(w, " + a recall question about turn %d", sc.FactTurn)
	}
	fmt.Fprintf(w, ", %d-token window\n", sc.Window)
	row := func(k string, format string, a ...any) {
		fmt.Fprintf(w, "  %-34s "+format+"\n", append([]any{k}, a...)...)
	}
	row("requests", "%d (agent %d, summarizer %d; %d refused)", b.Requests+b.Rejected, b.Requests-b.SummaryRequests, b.SummaryRequests, b.Rejected)
	crush, hasCrush := CrushReference(sc)
	vs := func(got, ref int) string {
		if !hasCrush || ref <= 0 {
			return ""
		}
		return fmt.Sprintf("  %.2fx Crush's %s", float64(got)/float64(ref), thousands(ref))
	}
	row("total prompt tokens", "%s%s", thousands(b.Prompt), vs(b.Prompt, crush.Prompt))
	row("uncached (not a shared prefix)", "%s (%.1f%%)%s", thousands(b.Uncached()), pct(b.Uncached(), b.Prompt), vs(b.Uncached(), crush.Uncached))
	row("billed at a 10% cached price", "%s%s", thousands(int(b.Billed(0.1))), vs(int(b.Billed(0.1)), crush.Billed10))
	row("billed at a 50% cached price", "%s", thousands(int(b.Billed(0.5))))
	row("summarizer calls / share of prompt", "%d / %.1f%%", b.SummaryRequests, 100*b.SummaryShare())
	if hasCrush {
		row("Crush's figures", "%s", crush.Source)
	} else {
		row("Crush's figures", "none for %d turns of %s: no comparison", sc.Turns, sc.Name)
	}
	row("requests over the window", "%d", b.OverWindow)
	row("tool-call pairing violations", "%d", b.RuleViolations)
	alt := fmt.Sprint(r.Alternation)
	if r.FirstAlternation != "" {
		alt += " (first: " + r.FirstAlternation + ")"
	}
	row("role-order violations (strict tmpl)", "%s", alt)
	row("distinct system prompts", "%d", r.SystemPrompts)
	row("history rewrites (prefix breaks)", "%d", r.Breaks)
	row("failed turns", "%d", r.Failed())
	if sc.FactTurn > 0 {
		got := "no"
		if r.Recalled {
			got = "yes"
		}
		row("early fact recalled", "%s: %q", got, clip(r.RecallAnswer, 80))
	}
	var total time.Duration
	for _, t := range r.Turns {
		total += t.CPU
	}
	row("CPU of all runs", "%.1f s", total.Seconds())
	fmt.Fprintf(w, "  CPU per turn (user+system of the gencode process), mean / median:\n")
	for _, c := range r.CPUByRange() {
		fmt.Fprintf(w, "    turns %4d-%-4d %6.3f s / %6.3f s\n", c.From, c.To, c.Mean.Seconds(), c.Median.Seconds())
	}
	if b, ok := r.BaselineCPU(); ok {
		fmt.Fprintf(w, "    turns %4d-%-4d %6.3f s / %6.3f s  again, in a new session, each before a turn of the last range\n", b.From, b.To, b.Mean.Seconds(), b.Median.Seconds())
		fmt.Fprintf(w, "    last range / first played beside it (medians): %.2fx\n", r.CPUGrowth())
		return
	}
	fmt.Fprintf(w, "    last range / first (medians): %.2fx\n", r.CPUGrowth())
}

// WriteTargets prints the targets and reports whether all were met.
func WriteTargets(w io.Writer, r Result) bool {
	ok := true
	fmt.Fprintf(w, "  targets of scenario %s:\n", r.Scenario.Name)
	for _, t := range r.Targets() {
		mark := "ok  "
		if !t.OK {
			mark = "MISS"
			ok = false
		}
		fmt.Fprintf(w, "    %s %-34s %s (want %s)\n", mark, t.What, t.Got, t.Want)
	}
	return ok
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// thousands writes n with thin separators: 1,390,000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
