package report

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/results"
)

// WriteDictionary writes dir's data dictionary, columns.csv
// (results.Dictionary): every file at its top and arms/*/summary.json,
// and every column of its CSV files, read from their headers. RunDir.Commit
// writes it, so that every run directory has one describing what it holds.
func WriteDictionary(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var files []string
	headers := map[string][]string{}
	for _, e := range ents {
		n := e.Name()
		switch {
		case strings.HasPrefix(n, "."):
		case e.IsDir() && n == results.ArmsDir:
			files = append(files, results.ArmsDir+"/*/summary.json")
		case e.Type().IsRegular():
			files = append(files, n)
			if _, ok := results.Lookup(n); ok && n != results.ColumnsFile.Name {
				h, err := readHeader(filepath.Join(dir, n))
				if err != nil {
					return fmt.Errorf("%s: %w", n, err)
				}
				headers[n] = h
			}
		}
	}
	return WriteFileAtomic(filepath.Join(dir, results.ColumnsFile.Name), results.Dictionary(files, headers))
}

// readHeader is the first record of a CSV file.
func readHeader(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return csv.NewReader(f).Read()
}
