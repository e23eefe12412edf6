//! JMeter's results, CSV and XML: a transaction's own sample is no request, samples nested in
//! another are its requests (grouped under it), a failing assertion says why, entities are
//! decoded, and a file cut short keeps what came before the cut.

use loadlab_metrics::RunResult;
use loadlab_record::{summarize, StoredRecord};
use loadlab_results_import::{import_file, Format, ImportError, Imported, Options};
use std::path::Path;

fn import(dir: &Path, format: Format, text: &str) -> Result<(RunResult, Imported), ImportError> {
    let file = dir.join("results.jtl");
    std::fs::write(&file, text).unwrap();
    let run = dir.join("run");
    let _ = std::fs::remove_dir_all(&run);
    let options = Options {
        name: "plan".into(),
        ..Options::default()
    };
    let imported = import_file(format, &file, &run, &options)?;
    Ok((
        summarize(&StoredRecord::open(&run).unwrap()).unwrap(),
        imported,
    ))
}

fn step<'a>(r: &'a RunResult, name: &str) -> &'a loadlab_metrics::result::StepResult {
    r.steps
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no step {name}: {:?}", r.steps))
}

const XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testResults version="1.2">
<sample t="300" it="0" lt="0" ct="0" ts="1700000000000" s="false" lb="Checkout" rc="500" rm="Number of samples in transaction : 2, number of failing samples : 1" tn="Buyers 1-1" dt="" by="300" sby="90" ng="2" na="2">
  <httpSample t="120" it="0" lt="100" ct="20" ts="1700000000000" s="true" lb="GET /cart" rc="200" rm="OK" tn="Buyers 1-1" dt="text" by="100" sby="40" ng="2" na="2">
    <java.net.URL>http://127.0.0.1/cart</java.net.URL>
  </httpSample>
  <httpSample t="180" it="0" lt="170" ct="0" ts="1700000000120" s="false" lb="POST /pay &amp; confirm" rc="500" rm="Internal Server Error" tn="Buyers 1-1" dt="text" by="200" sby="50" ng="2" na="2">
    <assertionResult>
      <name>Response Assertion</name>
      <failure>true</failure>
      <error>false</error>
      <failureMessage>Test failed: code expected to equal /
****** received  : [[[500]]]
****** comparison: [[[200]]]
/</failureMessage>
    </assertionResult>
    <responseData class="java.lang.String"><![CDATA[<html>secret body</html>]]></responseData>
  </httpSample>
</sample>
<httpSample t="50" lt="40" ts="1700000000500" s="true" lb="Home" rc="200" rm="OK" tn="Buyers 1-2" by="10" na="2">
  <httpSample t="20" lt="15" ts="1700000000500" s="true" lb="Home-0" rc="302" rm="Found" tn="Buyers 1-2" by="0" na="2"/>
  <httpSample t="30" lt="25" ts="1700000000520" s="true" lb="Home-1" rc="200" rm="OK" tn="Buyers 1-2" by="10" na="2"/>
</httpSample>
<httpSample t="40" lt="30" ts="1700000000600" s="true" lb="Caf&#233; &lt;menu&gt;" rc="200" rm="OK" tn="Buyers 1-2" by="9" na="2"/>
<sample t="40" lt="0" ts="1700000000600" s="true" lb="Browse" rc="200" rm="Number of samples in transaction : 1, number of failing samples : 0" tn="Buyers 1-2" dt="" by="9" na="2"/>
<httpSample t="x" ts="1700000000700" s="true" lb="bad" rc="200" tn="Buyers 1-2"/>
</testResults>
"#;

#[test]
fn nested_samples_are_requests_grouped_under_the_sample_they_are_in() {
    let dir = tempfile::tempdir().unwrap();
    let (r, imported) = import(dir.path(), Format::JmeterXml, XML).unwrap();
    // The cart, the payment, two redirect hops and the café: not the transaction, not the
    // page that holds its hops, not the Browse transaction's own sample.
    assert_eq!(r.requests.total, 5, "{:?}", r.steps);
    assert_eq!(r.requests.failed, 1);
    assert_eq!(r.status_codes.get("302"), Some(&1));
    let pay = step(&r, "POST /pay & confirm");
    assert_eq!(pay.group.as_deref(), Some("Checkout"));
    assert_eq!(step(&r, "Home-0").group.as_deref(), Some("Home"));
    assert_eq!(step(&r, "Café <menu>").group.as_deref(), Some("Buyers"));
    let example = r.error_examples.values().next().expect("an error example");
    assert!(
        example.contains("Test failed: code expected to equal"),
        "{example}"
    );
    assert!(
        !format!("{r:?}").contains("secret body"),
        "bodies are not kept"
    );
    // The sample with `t="x"` is reported by its line, not dropped silently.
    assert_eq!(imported.malformed.count, 1);
    assert_eq!(
        imported.malformed.first[0].0, 26,
        "{:?}",
        imported.malformed
    );
    assert_eq!(r.vus_max, Some(2), "na");
    let notes = r.notes.join("\n");
    assert!(
        notes.contains("2 sample(s) held samples of their own"),
        "{notes}"
    );
    assert!(
        notes.contains("1 Transaction Controller sample(s) are not requests"),
        "{notes}"
    );
}

#[test]
fn a_file_cut_short_keeps_the_samples_before_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let cut = &XML[..XML.find("<httpSample t=\"40\"").unwrap() + 30];
    let (r, imported) = import(dir.path(), Format::JmeterXml, cut).unwrap();
    assert_eq!(r.requests.total, 4, "{:?}", r.steps);
    assert_eq!(imported.malformed.count, 1, "{:?}", imported.malformed);
    assert!(imported.malformed.first[0]
        .1
        .contains("not well-formed XML"));
}

/// Cut between two samples, the XML is well formed up to there: the cut is said all the same.
#[test]
fn a_file_cut_between_samples_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let cut = &XML[..XML.find("<httpSample t=\"x\"").unwrap()];
    let (r, imported) = import(dir.path(), Format::JmeterXml, cut).unwrap();
    assert_eq!(r.requests.total, 5, "{:?}", r.steps);
    assert!(imported.malformed.is_empty(), "{:?}", imported.malformed);
    let notes = r.notes.join("\n");
    assert!(
        notes.contains("the file ends at line 26 without </testResults>"),
        "{notes}"
    );
    let (whole, _) = import(dir.path(), Format::JmeterXml, XML).unwrap();
    assert!(!whole.notes.join("\n").contains("without </testResults>"));
}

#[test]
fn the_csv_leaves_transaction_rows_out_and_points_xml_to_its_reader() {
    let dir = tempfile::tempdir().unwrap();
    let csv = "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n\
        1700000000000,120,GET /cart,200,OK,Buyers 1-1,text,true,,100,40,1,1,http://x/cart,100,0,20\n\
        1700000000120,180,POST /pay,200,OK,Buyers 1-1,text,true,,200,50,1,1,http://x/pay,170,0,0\n\
        1700000000000,300,Checkout,200,\"Number of samples in transaction : 2, number of failing samples : 0\",Buyers 1-1,,true,,300,90,1,1,null,0,0,0\n";
    let (r, _) = import(dir.path(), Format::JmeterCsv, csv).unwrap();
    assert_eq!(r.requests.total, 2);
    assert!(r
        .notes
        .join("\n")
        .contains("1 Transaction Controller sample(s)"));
    let err = import(dir.path(), Format::JmeterCsv, XML)
        .unwrap_err()
        .to_string();
    assert!(err.contains("import it as jmeter-xml"), "{err}");
}

#[test]
fn of_runs_appended_to_one_file_the_newest_is_imported() {
    let dir = tempfile::tempdir().unwrap();
    let sample = |ts: u64, label: &str| {
        format!("<httpSample t=\"10\" lt=\"5\" ts=\"{ts}\" s=\"true\" lb=\"{label}\" rc=\"200\" rm=\"OK\" tn=\"G 1-1\" na=\"1\"/>\n")
    };
    // Two samples, then 3 hours later three (one of them a little out of order).
    let text = format!(
        "<?xml version=\"1.0\"?>\n<testResults version=\"1.2\">\n{}{}{}{}{}</testResults>\n",
        sample(1_700_000_000_000, "old"),
        sample(1_700_000_001_000, "old"),
        sample(1_700_010_800_000, "new"),
        sample(1_700_010_801_000, "new"),
        sample(1_700_010_800_500, "new"),
    );
    let (r, _) = import(dir.path(), Format::JmeterXml, &text).unwrap();
    assert_eq!(r.requests.total, 3);
    assert!(r.steps.iter().all(|s| s.name == "new"), "{:?}", r.steps);
    assert!(r.duration_s < 5.0, "{}", r.duration_s);
    let notes = r.notes.join("\n");
    assert!(
        notes.contains("the file holds 2 test runs")
            && notes.contains("after 3.0 h without a sample")
            && notes.contains("the 2 sample(s) before it were left out"),
        "{notes}"
    );
}

#[test]
fn csv_dates_without_a_zone_are_read_as_utc_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let csv = "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n\
        2019/12/05 12:37:24,1700,GET /licence,200,OK,Users 2-1,text,true,,5000,200,1,3,http://x/l,1600,0,100\n\
        2019/12/05 12:37:26,300,GET /home,200,OK,Users 2-1,text,true,,5000,200,1,3,http://x/h,250,0,0\n";
    let (r, imported) = import(dir.path(), Format::JmeterCsv, csv).unwrap();
    assert_eq!(r.requests.total, 2);
    assert!(imported.malformed.is_empty());
    assert!(
        r.started_at.starts_with("2019-12-05T12:37:2"),
        "{}",
        r.started_at
    );
    assert!(r
        .notes
        .join("\n")
        .contains("2 sample(s) started at a date without a time zone"));
}

/// JMeter times in whole ms: a receiving time of 0 (`elapsed` = `Latency`) is under 1 ms,
/// kept at the histograms' 1 µs floor, and the run says so.
#[test]
fn phases_of_0_ms_are_said_to_be_under_1_ms() {
    let dir = tempfile::tempdir().unwrap();
    let csv = "timeStamp,elapsed,label,responseCode,success,threadName,Latency,Connect\n\
        1700000000000,120,a,200,true,T 1-1,120,20\n\
        1700000000200,120,a,200,true,T 1-1,100,20\n";
    let (r, _) = import(dir.path(), Format::JmeterCsv, csv).unwrap();
    let notes = r.notes.join("\n");
    assert!(
        notes.contains("1 request(s) had a waiting or receiving time of 0 ms"),
        "{notes}"
    );
}
