// The schedule knobs as the template sees them (mirrors swr::AttentionConfig on the host).
#pragma once

namespace swr {
namespace attention {

enum class KvOrder { cyclic, sawtooth };
enum class Persistence { grid, static_loop, dynamic };
enum class TileSwizzle { head_major, heads_interleaved, head_groups };

}  // namespace attention
}  // namespace swr
