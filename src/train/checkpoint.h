// Checkpoints in the model directory (DESIGN.md principle 4: a model is a directory; writes are
// atomic; a checkpoint is never half written). The layout, also in docs/model_dir.md:
//
//   MODEL_DIR/config.json          the ModelConfig as JSON (pretty-printed)
//   MODEL_DIR/spm.model            the SentencePiece vocabulary (copied in by the trainer)
//   MODEL_DIR/model.safetensors    the latest weights (plain safetensors, loadable from Python),
//                                  the config as "config" and the step as "step" in the metadata
//   MODEL_DIR/checkpoints/step-00001234/model.safetensors      weights, the config in metadata
//                                      /optimizer.safetensors  Adam moments "m.<param name>" and
//                                                              "v.<param name>"; the optimizer's
//                                                              step count as "steps" in metadata
//                                      /state.json             the trainer's state + "step"
//                                      /ema.safetensors        with --ema-decay: the moving average
//                                                              of the weights (names, config as in
//                                                              model.safetensors)
//   MODEL_DIR/best/                the weights that scored best in validation (--valid-metric), a
//                                  model directory of its own, with best.json saying when and how
//   MODEL_DIR/ema/                 with --ema-decay: the moving average as a model directory
//
// A checkpoint is written into checkpoints/step-XXXXXXXX.tmp-<pid>/ and renamed into place only
// when its three files are complete and synced, so a crash at any moment leaves either the
// previous set of checkpoints or the new one. Names containing ".tmp-" are never checkpoints;
// the next save removes them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/transformer.h"
#include "train/adam.h"

namespace transduce {

// Writes checkpoints/step-<step, 8 digits>/ atomically (temp dir, every file fsync'ed, rename,
// fsync of checkpoints/), then rewrites MODEL_DIR/model.safetensors atomically, then deletes the
// oldest complete checkpoints beyond `keep` (keep <= 0: keep all; the one just written is never
// deleted). Leftover temporary dirs and files of a killed run are removed first. Saving a step
// that already has a checkpoint replaces it atomically. state.json holds `trainer_state` (an
// object, or null for none) with "step" set to `step`.
// With `ema`, the moving average of the weights (parallel to model.parameters()) goes into
// ema.safetensors.
void save_checkpoint(const std::string& model_dir, const Transformer& model, const Adam& adam,
                     int64_t step, const nlohmann::json& trainer_state, int keep,
                     const std::vector<Tensor>* ema = nullptr);

// Reads a checkpoint's ema.safetensors into `ema` (parallel to model.parameters()); false, with
// `ema` untouched, when the checkpoint has none. A file that does not match the model fails.
bool load_checkpoint_ema(const std::string& checkpoint_dir, const Transformer& model,
                         std::vector<Tensor>& ema);

// MODEL_DIR/checkpoints/step-<step, 8 digits>: where the checkpoint of `step` is (or would be).
std::string checkpoint_dir(const std::string& model_dir, int64_t step);

// Complete checkpoints of a model directory (dirs named step-NNNNNNNN holding all three files),
// oldest first; empty when there is no checkpoints/ dir. The files are not read.
std::vector<std::string> list_checkpoints(const std::string& model_dir);

// Loads the weights into `model`, the moments and step count into `adam`, and returns the contents
// of state.json (the trainer state with "step"). Every file is read and checked against the model
// before anything is changed: a missing, corrupt or mismatched file is a transduce::Error naming
// it, and leaves `model` and `adam` as they were.
nlohmann::json load_checkpoint(const std::string& checkpoint_dir, Transformer& model, Adam& adam);

// A checkpoint's state.json: the trainer state with its "step" (a non-negative integer), or an
// error naming the file.
nlohmann::json read_checkpoint_state(const std::string& checkpoint_dir);

// The newest complete checkpoint whose files all read and agree with one another (checkpoints
// that do not are skipped with a warning), or nullopt when there is none.
std::optional<std::string> latest_checkpoint(const std::string& model_dir);

// A test hook: when set, save_checkpoint calls it at "after-weights", "after-optimizer",
// "after-state", "before-rename", "after-rename" and "after-latest", and save_model_snapshot
// (train/model_snapshot.h) at "snapshot-before-rename", so tests can throw or _exit there. An empty
// function removes it. reach_fault_point() is how the savers call it.
void set_checkpoint_fault_hook(std::function<void(const char* point)> hook);
void reach_fault_point(const char* point);

}  // namespace transduce
