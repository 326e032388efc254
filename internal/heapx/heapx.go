package heapx

// Push adds x to the heap h.
func Push[T any](h *[]T, x T, less func(a, b *T) bool) {
	*h = append(*h, x)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !less(&s[i], &s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

// Pop removes and returns the least item; h must not be empty.
func Pop[T any](h *[]T, less func(a, b *T) bool) T {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	var zero T
	s[last] = zero
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && less(&s[l], &s[m]) {
			m = l
		}
		if r < len(s) && less(&s[r], &s[m]) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
