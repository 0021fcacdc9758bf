// The build generates the dialect and pass documentation.
// RUN: FileCheck %s --check-prefix=DIALECT --input-file=%linattn_obj_root/docs/LinAttn/LinAttnDialect.md
// RUN: FileCheck %s --check-prefix=PASSES --input-file=%linattn_obj_root/docs/LinAttn/LinAttnPasses.md

// DIALECT: ### `linattn.apply_scores`
// DIALECT: ### `linattn.attention`
// DIALECT: ### `linattn.feature_map`
// DIALECT: ### `linattn.kv_summary`
// DIALECT: ### `linattn.query_readout`
// DIALECT: ### `linattn.scan`
// DIALECT: ### `linattn.scores`
// DIALECT: ### `linattn.step`
// PASSES: ### `-linattn-chunk-scan`
// PASSES: ### `-linattn-decompose`
// PASSES: ### `-linattn-masked-to-scan`
// PASSES: ### `-linattn-raise`
// PASSES: ### `-linattn-reassociate`
// PASSES: ### `-linattn-scan-to-steps`
