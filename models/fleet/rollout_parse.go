package fleet

import (
	"fmt"
	"strconv"
	"strings"
)

func sscanSplit(s string, b, g *float64, rest *string) (int, error) {
	left, right, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return 0, fmt.Errorf("no colon")
	}
	var err error
	if *b, err = strconv.ParseFloat(strings.TrimSpace(left), 64); err != nil {
		return 0, err
	}
	if *g, err = strconv.ParseFloat(strings.TrimSpace(right), 64); err != nil {
		return 1, err
	}
	return 2, nil
}

func errSplit(s string) error {
	return fmt.Errorf("traffic split %q: expected BLUE:GREEN percentages that sum to 100, such as \"95:5\"", s)
}
