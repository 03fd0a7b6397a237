//! The peak stack, by stack painting, shared by the firmware images (included with
//! `#[path]`): the free stack (from `_stack_end`, just above the statics, up to below the
//! caller's frame) is filled with `PAINT` by [`repaint`] (or by cortex-m-rt's `paint-stack`
//! feature before `main`, with the same value); the stack grows down from `_stack_start`,
//! the top of RAM, so the lowest word no longer painted is the deepest the stack has been
//! since, interrupt frames included (they use the same stack).
//!
//! A frame that reserved words it never wrote (an unused part of a buffer) at its lowest
//! addresses would be missed: the figure is a lower bound, exact for the usual frames.

/// cortex-m-rt's paint value (`STACK_PAINT_VALUE`), so that every image reads alike.
const PAINT: u32 = 0xCCCC_CCCC;

extern "C" {
    // cortex-m-rt's linker script (link.x) defines both; only their addresses mean anything.
    static _stack_end: u32;
    static _stack_start: u32;
}

/// The stack region's size and the most of it used, in bytes.
#[derive(Debug)]
pub struct StackUse {
    pub peak: u32,
    pub size: u32,
}

fn region() -> (usize, usize) {
    (
        core::ptr::addr_of!(_stack_end) as usize,
        core::ptr::addr_of!(_stack_start) as usize,
    )
}

/// The peak since the reset (or the last [`repaint`]): scans the painted region from its
/// bottom up to the first word scrubbed off.
pub fn high_water() -> StackUse {
    let (bottom, top) = region();
    let mut low = bottom;
    // SAFETY: [bottom, top) is the stack region, RAM the program may read; the words are
    // read as plain integers (volatile: the compiler knows nothing of what wrote them).
    while low < top && unsafe { core::ptr::read_volatile(low as *const u32) } == PAINT {
        low += 4;
    }
    StackUse {
        peak: (top - low) as u32,
        size: (top - bottom) as u32,
    }
}

/// Paints the free stack: everything below this function's frame, less a margin. Call it
/// with no interrupt enabled that could use the stack.
#[inline(never)]
pub fn repaint() {
    let (bottom, _) = region();
    // Below the stack pointer nothing lives; 64 bytes spare whatever this loop spills.
    let below = (cortex_m::register::msp::read() as usize).saturating_sub(64);
    let mut word = bottom;
    while word < below {
        // SAFETY: [bottom, below) is stack below the stack pointer: free, and nothing (no
        // interrupt, by the caller's word) pushes a frame there while we paint.
        unsafe { core::ptr::write_volatile(word as *mut u32, PAINT) };
        word += 4;
    }
}
