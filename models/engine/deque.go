package engine

// deque is a ring-buffer double-ended queue of sequences. len(buf) is 0 or
// a power of two (16, doubled), so ring positions wrap with a mask.
type deque struct {
	buf        []*seq
	head, size int
}

func (d *deque) len() int { return d.size }

func (d *deque) grow() {
	n := len(d.buf) * 2
	if n == 0 {
		n = 16
	}
	nb := make([]*seq, n)
	for i := 0; i < d.size; i++ {
		nb[i] = d.buf[(d.head+i)&(len(d.buf)-1)]
	}
	d.buf, d.head = nb, 0
}

func (d *deque) pushBack(s *seq) {
	if d.size == len(d.buf) {
		d.grow()
	}
	d.buf[(d.head+d.size)&(len(d.buf)-1)] = s
	d.size++
}

func (d *deque) pushFront(s *seq) {
	if d.size == len(d.buf) {
		d.grow()
	}
	d.head = (d.head - 1) & (len(d.buf) - 1)
	d.buf[d.head] = s
	d.size++
}

func (d *deque) front() *seq { return d.buf[d.head] }

func (d *deque) popFront() *seq {
	s := d.buf[d.head]
	d.buf[d.head] = nil
	d.head = (d.head + 1) & (len(d.buf) - 1)
	d.size--
	return s
}
