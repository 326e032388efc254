package htmlreport

import "html/template"

// armName is a column head: a plain run's arm "" is shown as "value".
func armName(a string) string {
	if a == "" {
		return "value"
	}
	return a
}

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{"arm": armName}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="fleetsim report">
<title>{{.Title}}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",Arial,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#111;line-height:1.4}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
.sub{color:#555;margin-top:0}
table{border-collapse:collapse;margin:.5em 0 1em;font-size:.9em}
th,td{border:1px solid #ccc;padding:.2em .5em;vertical-align:top}
th{background:#f3f3f3;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.u{font-weight:normal;color:#666;font-size:.85em}
.scroll{overflow-x:auto}
code,pre{font-family:"Liberation Mono",Menlo,Consolas,monospace;font-size:.85em}
pre{background:#f7f7f7;border:1px solid #ddd;padding:.8em;overflow-x:auto}
figure{margin:1em 0;page-break-inside:avoid}figure svg{max-width:100%;height:auto;display:block}
figcaption{color:#555;font-size:.9em}
details>summary{cursor:pointer;margin:.5em 0}
@media print{details{display:block}.scroll{overflow:visible}}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="sub">{{.Kind}} · run directory <code>{{.Dir}}</code></p>
<nav><a href="#provenance">Provenance</a> · <a href="#results">Results</a>{{if .Tables}} · <a href="#tables">Tables</a>{{end}}{{if .Figures}} · <a href="#figures">Figures</a>{{end}}{{if .SummaryMD}} · <a href="#summary-md">summary.md</a>{{end}} · <a href="#summary">summary.json</a>{{if .Scenario}} · <a href="#scenario">Scenario</a>{{end}} · <a href="#files">Files</a></nav>

<h2 id="provenance">Provenance</h2>
<div class="scroll"><table id="provenance-table">
<thead><tr><th>key</th>{{range .Arms}}<th>{{arm .}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Provenance}}
<tr><th>{{.Label}}{{if .Unit}} <span class="u">({{.Unit}})</span>{{end}}</th>{{range .Cells}}<td data-arm="{{.Arm}}" data-key="{{.Key}}">{{.Text}}</td>{{end}}</tr>
{{- end}}
</tbody></table></div>
<p>From each summary.json. The files the report was made from, with their SHA-256, are listed <a href="#files">at the end</a>.</p>

<h2 id="results">Results</h2>
<p>Mean over replications ± the half-width of its 95% confidence interval (Student t; none from one replication), as summary.json records them.</p>
<div class="scroll"><table id="results-table">
<thead><tr><th>metric</th><th>unit</th>{{range .Arms}}<th>{{arm .}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Results}}
<tr><th>{{.Label}} <span class="u"><code>{{.Key}}</code></span></th><td>{{.Unit}}</td>{{range .Cells}}<td class="n" data-arm="{{.Arm}}" data-key="{{.Key}}">{{.Text}}</td>{{end}}</tr>
{{- end}}
</tbody></table></div>
{{if .Tables}}
<h2 id="tables">Tables</h2>
{{- range .Tables}}
<h3 id="{{.ID}}"><code>{{.Name}}</code>{{if .Index}}: headline metrics{{end}}</h3>
{{if .Meaning}}<p>{{.Meaning}}.</p>{{end}}
<details{{if .Open}} open{{end}}><summary>{{len .Rows}} rows{{if .Index}} of {{.Name}}{{end}}</summary>
<div class="scroll"><table class="csv" data-file="{{.Name}}"{{if .Index}} data-rows="{{.Index}}"{{end}}>
<thead><tr>{{range .Head}}<th{{if .Meaning}} title="{{.Meaning}}"{{end}}>{{.Name}}{{if .Unit}}<br><span class="u">{{.Unit}}</span>{{end}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr>{{range .}}<td class="n">{{.}}</td>{{end}}</tr>
{{- end}}
</tbody></table></div>
</details>
{{- end}}
{{end}}
{{- if .Figures}}
<h2 id="figures">Figures</h2>
<p>As <code>fleetsim plot</code> draws them from the directory's files.</p>
{{- range .Figures}}
<figure id="figure-{{.Name}}">
{{.SVG}}
<figcaption>{{.Name}}</figcaption>
</figure>
{{- end}}
{{end}}
{{if .SummaryMD}}
<h2 id="summary-md">The command's summary</h2>
<p><code>summary.md</code>, the tables the command printed{{if .AB}}, and its verdicts{{end}}.</p>
<details><summary>summary.md</summary>
<pre>{{.SummaryMD}}</pre>
</details>
{{end}}
<h2 id="summary">summary.json</h2>
<p>Every value, by dotted key (arrays indexed from 0), with its 95% CI half-width where there is one.</p>
{{- range .Summaries}}
<details><summary><code>{{.Path}}</code></summary>
<div class="scroll"><table class="summary" data-arm="{{.Arm}}">
<thead><tr><th>key</th><th>value</th><th>ci95</th></tr></thead>
<tbody>
{{- $ci := .CI}}
{{- range $i, $c := .Rows}}
<tr><th><code>{{$c.Key}}</code></th><td class="n" data-arm="{{$c.Arm}}" data-key="{{$c.Key}}">{{$c.Text}}</td><td class="n">{{index $ci $i}}</td></tr>
{{- end}}
</tbody></table></div>
</details>
{{- end}}
{{if .Scenario}}
<h2 id="scenario">Scenario</h2>
<p><code>{{.Scenario.Source}}</code>{{if .Scenario.Given}}: given to <code>fleetsim report</code>, not recorded in the run directory; command-line changes to it (<code>--set</code>, <code>--param</code>, arms) are not shown here{{end}}</p>
<pre>{{.Scenario.Text}}</pre>
{{end}}
<h2 id="files">Files</h2>
<div class="scroll"><table id="files-table">
<thead><tr><th>file</th><th>bytes</th><th>SHA-256</th></tr></thead>
<tbody>
{{- range .Files}}
<tr><td><code>{{.Name}}</code></td><td class="n">{{.Size}}</td><td><code>{{.SHA256}}</code></td></tr>
{{- end}}
</tbody></table></div>
<p class="sub">Made by <code>fleetsim report</code> from the directory alone: the same directory gives the same file.</p>
</body>
</html>
`))
