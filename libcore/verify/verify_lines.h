#pragma once

// The lines of cdc-apply --verify (man/cdc-ndjson.5, "verify, verify_summary"):
//
//   {"op":"verify","v":1,"db":"shop","table":"orders","index":3,"count":12,"start":[1000],
//    "end":[2000],"status":"differs","rows_source":1000,"rows_target":999,
//    "source_position":"0-1-42","target_position":"0-1-45","rounds":1,
//    "keys":[{"key":{"id":1500},"source":true,"target":false}],"keys_total":1}
//   {"op":"verify_summary","v":1,"tables":2,"chunks":13,"equal":12,"differs":1,
//    "unsettled":0,"keys_total":1,"seconds":1.25}
//
// keys and keys_total only when the chunk differs, reason only when it is unsettled.

#include <cstdint>

#include "ndjson/writer.h"
#include "records/chunk.h"
#include "verify/chunk_verdict.h"
#include "verify/run_verify.h"

namespace cdc::verify {

// One line, ending the record; at most max_keys keys listed, keys_total counts them all.
void write_verify_line(const records::Chunk& chunk, const Verdict& verdict, std::uint64_t max_keys,
                       ndjson::Writer& out);
void write_summary_line(const VerifySummary& summary, ndjson::Writer& out);

}  // namespace cdc::verify
