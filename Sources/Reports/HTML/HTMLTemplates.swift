/// report.html's templates, style and script: Mustache text rendered over `HTMLPage`.
/// `{{name}}` escapes its value for HTML (every text from the run goes through it, by
/// `HTMLByteEscaping`, which the first tag selects);
/// `{{{name}}}` is used only for SVG that `SVG` built and escaped itself, for table rows and
/// headings that `HTMLRows` built and escaped the same way, and for this file's own constants.
enum HTMLTemplates {
    static let page = """
        {{% CONTENT_TYPE:HTMLBYTES}}<!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta http-equiv="Content-Security-Policy" content="{{csp}}">
        <title>{{title}}</title>
        <style>{{{style}}}</style>
        </head>
        <body>
        <header>
        <h1>{{title}}</h1>
        {{#summary}}<p class="lead">{{.}}</p>
        {{/summary}}
        <nav><a href="#totals">Totals</a> · <a href="#costs">What costs the user</a> · <a href="#protocols">Protocols</a> · <a href="#charts">Charts</a> · <a href="#endpoints">Endpoints</a> · <a href="#cost-layers">Cost layers</a> · <a href="#inputs">Inputs</a> · <a href="#quality">Data quality</a></nav>
        </header>
        <main>
        <section id="totals">
        <h2>Totals</h2>
        <p>Bytes on the wire against each estimator, up (requests) and down (responses); error = estimate - wire. Median, p95 and max: of the per-record relative error |estimate - wire| / wire.</p>
        <div class="scroll"><table class="figures">
        <thead><tr>{{{totalsHeader}}}</tr></thead>
        <tbody>
        {{{totalsRows}}}</tbody>
        </table></div>
        {{#estimatorsLine}}<p>{{.}}</p>{{/estimatorsLine}}
        {{#settingsLine}}<p>{{.}}</p>{{/settingsLine}}
        </section>
        {{#hasCosts}}
        <section id="costs">
        <h2>What costs the user</h2>
        <p>{{costsIntro}}</p>
        <div class="scroll"><table class="figures">
        <thead><tr>{{{costsHeader}}}</tr></thead>
        <tbody>
        {{{costsRows}}}</tbody>
        </table></div>
        {{#costsNotes}}<p>{{.}}</p>
        {{/costsNotes}}
        <div class="charts">
        {{#costsChart}}<figure class="{{size}}">
        <figcaption><strong>{{title}}</strong></figcaption>
        {{{svg}}}
        {{#note}}<p class="note">{{.}}</p>{{/note}}
        </figure>
        {{/costsChart}}
        </div>
        </section>
        {{/hasCosts}}
        {{#protocols}}
        <section id="protocols">
        <h2>Protocols</h2>
        <p>The totals split by the HTTP each record travelled as: HTTP/1.x or HTTP/2 in a capture, a HAR entry's httpVersion (unknown when it names none); error = estimate - wire.</p>
        <div class="scroll"><table class="figures">
        <thead><tr>{{{splitHeader}}}</tr></thead>
        <tbody>
        {{{splitRows}}}</tbody>
        </table></div>
        {{#hasHTTP2}}
        <h3 id="http2-headers">HTTP/2 headers: the meter against HPACK</h3>
        <p>HTTP/2 sends header fields HPACK-compressed (a repeated field costs a byte or two); an app-layer meter counts them as text. Over the captured HTTP/2 records that are measured, have their fields decoded and have every estimate: wire headers are the HEADERS, CONTINUATION and PUSH_PROMISE frames with their 9-byte headers (wire_headers), the header list is the decoded fields at len(name) + len(value) + 32 each (header_list).</p>
        <ul>{{#http2Lines}}<li>{{.}}</li>{{/http2Lines}}</ul>
        <div class="scroll"><table class="figures" id="http2-table">
        <thead><tr>{{{http2Header}}}</tr></thead>
        <tbody>
        {{{http2Rows}}}</tbody>
        <tfoot>
        {{{http2Totals}}}</tfoot>
        </table></div>
        {{/hasHTTP2}}
        {{#hasHTTP3}}
        <h3 id="http3-headers">HTTP/3 headers: the meter against QPACK</h3>
        <p>HTTP/3 sends header fields QPACK-compressed (a field in the dynamic table costs a byte or two; its insert travels once on the QPACK encoder stream, counted as h3_control); an app-layer meter counts them as text. Over the decrypted HTTP/3 records that are measured, have their fields decoded and have every estimate: wire headers are the HEADERS and PUSH_PROMISE frames with their type and length varints (wire_headers), the header list is the decoded fields at len(name) + len(value) + 32 each (header_list).</p>
        <ul>{{#http3Lines}}<li>{{.}}</li>{{/http3Lines}}</ul>
        <div class="scroll"><table class="figures" id="http3-table">
        <thead><tr>{{{http3Header}}}</tr></thead>
        <tbody>
        {{{http3Rows}}}</tbody>
        <tfoot>
        {{{http3Totals}}}</tfoot>
        </table></div>
        {{/hasHTTP3}}
        </section>
        {{/protocols}}
        <section id="charts">
        <h2>Charts</h2>
        {{#chartGroups}}
        <h3>{{heading}}</h3>
        <div class="charts">
        {{#charts}}<figure class="{{size}}">
        <figcaption><strong>{{title}}</strong></figcaption>
        {{{svg}}}
        {{#note}}<p class="note">{{.}}</p>{{/note}}
        </figure>
        {{/charts}}
        </div>
        {{/chartGroups}}
        </section>
        <section id="endpoints">
        <h2>Endpoints</h2>
        <p>{{endpointsIntro}} The figures are those of endpoints.csv, column for column (ratios as fractions: 0.5 is 50%). Open an endpoint to see where its error comes from.</p>
        <p class="tools" id="table-tools" hidden><label>Filter <input id="endpoint-filter" type="search" placeholder="text in endpoint, direction or protocol"></label> <span id="filter-count"></span> Click a column's title to sort by it.</p>
        <div class="scroll"><table class="figures" id="endpoint-table">
        <thead>
        <tr>{{{endpointGroups}}}</tr>
        <tr>{{{endpointHeader}}}</tr>
        </thead>
        <tbody>
        {{{endpointRows}}}</tbody>
        <tfoot>
        {{{endpointTotals}}}</tfoot>
        </table></div>
        </section>
        <section id="cost-layers">
        <h2>Cost layers</h2>
        <p>What the network carried per direction: the HTTP messages' bytes, what TLS, TCP/IP and the link added to them, the message bytes sent again, and the packets and records no message owns (handshakes and ACKs, TLS handshakes, HTTP/2 control frames, unclaimed bytes). The endpoint table's ip_share gives each endpoint its connections' overhead, in proportion to its IP bytes.</p>
        <div class="charts">
        {{#costLayers}}<figure class="{{size}}">
        <figcaption><strong>{{title}}</strong></figcaption>
        {{{svg}}}
        {{#note}}<p class="note">{{.}}</p>{{/note}}
        </figure>
        {{/costLayers}}
        </div>
        {{#hasCostRows}}<div class="scroll"><table class="figures">
        <thead><tr>{{{costHeader}}}</tr></thead>
        <tbody>
        {{{costRows}}}</tbody>
        </table></div>{{/hasCostRows}}
        </section>
        {{#hasCoverage}}
        <section id="coverage">
        <h2>Coverage: what each meter saw</h2>
        <p>Each app meter's log joined to the records (docs/METER-LOG.md): entries no record joined were metered but never on the wire (a cache, a cancelled task, a host outside the capture); records no entry joined were on the wire but not metered.</p>
        <div class="charts">
        {{#coverageCharts}}<figure class="{{size}}">
        <figcaption><strong>{{title}}</strong></figcaption>
        {{{svg}}}
        {{#note}}<p class="note">{{.}}</p>{{/note}}
        </figure>
        {{/coverageCharts}}
        </div>
        {{#coverageMeters}}<h3>{{name}}</h3>
        <ul>{{#lines}}<li>{{.}}</li>{{/lines}}</ul>
        <div class="scroll"><table class="figures">
        <thead><tr>{{{coverageHeader}}}</tr></thead>
        <tbody>
        {{{hostRows}}}{{{endpointRows}}}</tbody>
        </table></div>
        {{/coverageMeters}}
        </section>
        {{/hasCoverage}}
        <section id="inputs">
        <h2>Inputs</h2>
        <div class="scroll"><table class="figures">
        <thead><tr>{{{inputsHeader}}}</tr></thead>
        <tbody>
        {{{inputRows}}}</tbody>
        </table></div>
        {{#quicLine}}<p id="quic">{{.}}</p>
        {{/quicLine}}{{#hasQUICServerNames}}<p>Bytes of the QUIC connections not decrypted (UDP payload, no record made of them), by server name:</p>
        <ul>{{#quicServerNames}}<li>{{.}}</li>{{/quicServerNames}}</ul>
        {{/hasQUICServerNames}}{{#hasInputErrors}}<h3>Errors</h3>
        <ul>{{#inputErrors}}<li>{{.}}</li>{{/inputErrors}}</ul>{{/hasInputErrors}}
        </section>
        <section id="quality">
        <h2>Data quality</h2>
        <table class="figures quality">
        <tbody>
        {{{quality}}}</tbody>
        </table>
        </section>
        </main>
        <footer><p>Written by MeterAudit. The same inputs give the same page, byte for byte. Definitions of every figure: docs/FIGURES.md.</p></footer>
        <script>{{{script}}}</script>
        </body>
        </html>

        """

    static let style = """
        :root{color-scheme:light;--ink:#1d1d1f;--muted:#5b5b60;--rule:#d9d9de;--band:#f5f5f7}
        body{margin:0 auto;max-width:1240px;padding:16px 20px 40px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:#fff}
        h1{font-size:24px;margin:8px 0}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid var(--rule);padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}
        p.lead{margin:4px 0}nav{margin:10px 0;color:var(--muted)}a{color:#0b5cad}
        .scroll{overflow-x:auto;max-width:100%}
        table.figures{border-collapse:collapse;font-variant-numeric:tabular-nums;font-size:12.5px}
        table.figures th,table.figures td{border:1px solid var(--rule);padding:3px 6px;vertical-align:top;text-align:left}
        table.figures thead th{background:var(--band);white-space:nowrap}
        table.figures th.group{text-align:left}
        table.figures td.n{text-align:right;white-space:nowrap}
        table.figures tbody tr:nth-child(even){background:#fafafc}
        table.figures tfoot td{font-weight:600;background:var(--band)}
        td.endpoint{min-width:24em;max-width:36em;overflow-wrap:anywhere}
        td.endpoint summary{cursor:pointer}
        td.endpoint details[open]{white-space:normal}
        p.cause-head{margin:6px 0 2px;font-weight:600;word-break:normal}
        td.endpoint ul{margin:0 0 4px;padding-left:18px;word-break:normal}
        th.sortable{cursor:pointer}th.sorted-asc::after{content:" \\25B2"}th.sorted-desc::after{content:" \\25BC"}
        .charts{display:flex;flex-wrap:wrap;gap:12px}
        figure{margin:0;border:1px solid var(--rule);border-radius:6px;padding:8px 10px;background:#fff;box-sizing:border-box}
        figure.wide{flex:1 1 100%}figure.half{flex:1 1 calc(50% - 12px);min-width:380px}
        figure svg{width:100%;height:auto;display:block}
        figcaption{margin-bottom:4px}p.note{color:var(--muted);font-size:12px;margin:4px 0 0}
        p.placeholder{padding:10px 12px;border:1px dashed #aaa;border-radius:6px;color:var(--muted);background:var(--band)}
        table.quality th{text-align:left;font-weight:normal;max-width:34em}
        p.tools input{font:inherit;padding:2px 6px;min-width:22em}
        footer{margin-top:32px;color:var(--muted);font-size:12px}
        """

    /// Sorting and filtering of the endpoint table. Without it the table is complete, in
    /// ranking order; the tools stay hidden.
    static let script = """
        (function(){
        var table=document.getElementById('endpoint-table');if(!table)return;
        var body=table.tBodies[0],heads=table.tHead.rows[1].cells;
        var tools=document.getElementById('table-tools');tools.hidden=false;
        var filter=document.getElementById('endpoint-filter'),count=document.getElementById('filter-count');
        function text(row,i){var c=row.cells[i];if(!c)return '';var s=c.querySelector('summary');return (s?s.textContent:c.textContent).trim();}
        function sortBy(i,th){
        var rows=Array.prototype.slice.call(body.rows),numeric=rows.every(function(r){var t=text(r,i);return t===''||!isNaN(Number(t));});
        var asc=!th.classList.contains('sorted-asc');
        for(var k=0;k<heads.length;k++){heads[k].classList.remove('sorted-asc','sorted-desc');}
        th.classList.add(asc?'sorted-asc':'sorted-desc');
        rows.sort(function(a,b){var x=text(a,i),y=text(b,i),d;
        if(numeric){if(x===''&&y==='')d=0;else if(x==='')return 1;else if(y==='')return -1;else d=Number(x)-Number(y);}
        else d=x<y?-1:x>y?1:0;return asc?d:-d;});
        rows.forEach(function(r){body.appendChild(r);});}
        Array.prototype.forEach.call(heads,function(th,i){th.classList.add('sortable');th.tabIndex=0;
        th.addEventListener('click',function(){sortBy(i,th);});
        th.addEventListener('keydown',function(e){if(e.key==='Enter'){sortBy(i,th);}});});
        filter.addEventListener('input',function(){var q=filter.value.toLowerCase(),shown=0;
        Array.prototype.forEach.call(body.rows,function(r){var hit=(text(r,0)+' '+text(r,1)+' '+text(r,2)).toLowerCase().indexOf(q)>=0;r.hidden=!hit;if(hit)shown++;});
        count.textContent=q?shown+' of '+body.rows.length+' rows':'';});
        })();
        """
}
