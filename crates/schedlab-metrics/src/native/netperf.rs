//! netperf TCP_RR / UDP_RR: the classic result table. The layout is **recalled** (netperf 2.x), not
//! checked against netperf's source.

use super::{NativeError, NativeFormat, find_line, metric, num, re};
use crate::result::{Better, Metric};
use regex::Regex;
use std::sync::LazyLock;

/// One netperf request/response test (TCP_RR, UDP_RR). The format is recalled, not checked
/// against netperf's source: the classic table ending in a row of socket sizes, request and
/// response sizes, elapsed time and transaction rate.
#[derive(Clone, Debug, PartialEq)]
pub struct NetperfRrReport {
    /// Local send socket size, bytes.
    pub send_socket: u64,
    /// Local receive socket size, bytes.
    pub recv_socket: u64,
    /// Request size, bytes.
    pub request: u64,
    /// Response size, bytes.
    pub response: u64,
    /// Elapsed time, seconds (2 decimals).
    pub elapsed_s: f64,
    /// Transactions per second (2 decimals).
    pub trans_per_sec: f64,
}

impl NetperfRrReport {
    /// `trans_per_sec` (higher is better).
    pub fn metrics(&self) -> Vec<Metric> {
        vec![metric(
            "trans_per_sec",
            self.trans_per_sec,
            "trans/s",
            Better::Higher,
        )]
    }
}

/// netperf TCP_RR output for `r` (recalled layout).
pub fn format_netperf_rr(r: &NetperfRrReport) -> String {
    format!(
        "MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 127.0.0.1 () port 0 AF_INET : first burst 0\n\
         Local /Remote\n\
         Socket Size   Request  Resp.   Elapsed  Trans.\n\
         Send   Recv   Size     Size    Time     Rate\n\
         bytes  Bytes  bytes    bytes   secs.    per sec\n\
         \n\
         {:<6} {:<6} {:<8} {:<7} {:<8.2} {:.2}\n\
         {:<6} {:<6}\n",
        r.send_socket,
        r.recv_socket,
        r.request,
        r.response,
        r.elapsed_s,
        r.trans_per_sec,
        r.send_socket,
        r.recv_socket
    )
}

static NP_ROW: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s*$"));

/// Reads netperf TCP_RR/UDP_RR output: the first six-column result row.
pub fn parse_netperf_rr(text: &str) -> Result<NetperfRrReport, NativeError> {
    const T: &str = "netperf";
    let (line, c) = find_line(text, &NP_ROW).ok_or(NativeError::Missing {
        tool: T,
        what: "result row",
    })?;
    Ok(NetperfRrReport {
        send_socket: num(T, line, &c, 1)?,
        recv_socket: num(T, line, &c, 2)?,
        request: num(T, line, &c, 3)?,
        response: num(T, line, &c, 4)?,
        elapsed_s: num(T, line, &c, 5)?,
        trans_per_sec: num(T, line, &c, 6)?,
    })
}

/// The `netperf` format (see [`format_netperf_rr`], [`parse_netperf_rr`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct NetperfRr;

impl NativeFormat for NetperfRr {
    const TOOL: &'static str = "netperf";
    type Report = NetperfRrReport;
    type Parsed = NetperfRrReport;

    fn format(r: &Self::Report) -> String {
        format_netperf_rr(r)
    }

    fn parse(text: &str) -> Result<Self::Parsed, NativeError> {
        parse_netperf_rr(text)
    }

    fn read_back(r: &Self::Report) -> Self::Parsed {
        r.clone()
    }

    fn examples() -> Vec<Self::Report> {
        vec![NetperfRrReport {
            send_socket: 16384,
            recv_socket: 131072,
            request: 1,
            response: 1,
            elapsed_s: 10.0,
            trans_per_sec: 35432.12,
        }]
    }
}
