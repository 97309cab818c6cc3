//! An allocator that gives large blocks back to the kernel as soon as they are freed.
//!
//! glibc maps a block from the kernel, and unmaps it when freed, only above its mmap threshold,
//! and that threshold rises to the size of every mapped block freed (up to 32 MiB): after one
//! 8 MB vector is freed (a temporary of setting up a fit at 1M rows, or a numpy array of the
//! caller's), vectors of up to 8 MB come from its heap, and the heap keeps what they free. A fit
//! at 1M rows then peaked 15–25 MB of resident memory above the blocks it held at once.
//! [`LargeBlocks`] maps every block of at least [`LARGE_BLOCK`] bytes itself, so that the
//! resident memory of a fit is what it holds, and leaves smaller ones to the system allocator.
//! The Python extension installs it; a Rust program may do the same:
//!
//! ```
//! #[global_allocator]
//! static ALLOCATOR: optboost::LargeBlocks = optboost::LargeBlocks;
//! ```

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks of at least this many bytes are mapped from the kernel (256 pages of 4 kB): a fit's
/// vectors of a value per row from about 130,000 rows, its bins from 37,000 rows of 28
/// features. Below it, mapping and unmapping would cost more than the memory they give back.
pub const LARGE_BLOCK: usize = 1 << 20;

/// The global allocator described in the module documentation ([`LARGE_BLOCK`] and up from the
/// kernel, the rest from [`System`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct LargeBlocks;

/// The alignment a mapping always has (Linux maps whole pages, of at least 4 kB).
#[cfg(target_os = "linux")]
const MAPPING_ALIGN: usize = 4096;

#[cfg(target_os = "linux")]
fn mapped(layout: Layout) -> bool {
    layout.size() >= LARGE_BLOCK && layout.align() <= MAPPING_ALIGN
}

#[cfg(not(target_os = "linux"))]
fn mapped(_: Layout) -> bool {
    false
}

// SAFETY: every block is allocated and freed by the same side (`mapped` depends on the layout
// only, and `realloc` moves a block between sides by allocating, copying and freeing); mappings
// are zeroed pages of at least the size asked for, aligned to a page.
unsafe impl GlobalAlloc for LargeBlocks {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if mapped(layout) {
            map(layout.size())
        } else {
            System.alloc(layout)
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if mapped(layout) {
            map(layout.size()) // fresh pages are zero
        } else {
            System.alloc_zeroed(layout)
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if mapped(layout) {
            unmap(ptr, layout.size())
        } else {
            System.dealloc(ptr, layout)
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        match (mapped(layout), mapped(new_layout)) {
            (false, false) => System.realloc(ptr, layout, new_size),
            (true, true) => remap(ptr, layout.size(), new_size),
            _ => {
                let new = self.alloc(new_layout);
                if !new.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                new
            }
        }
    }
}

#[cfg(target_os = "linux")]
fn map(size: usize) -> *mut u8 {
    // SAFETY: an anonymous private mapping at an address of the kernel's choosing touches no
    // existing memory.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        std::ptr::null_mut()
    } else {
        p.cast()
    }
}

#[cfg(target_os = "linux")]
unsafe fn unmap(ptr: *mut u8, size: usize) {
    libc::munmap(ptr.cast(), size);
}

#[cfg(target_os = "linux")]
unsafe fn remap(ptr: *mut u8, size: usize, new_size: usize) -> *mut u8 {
    let p = libc::mremap(ptr.cast(), size, new_size, libc::MREMAP_MAYMOVE);
    if p == libc::MAP_FAILED {
        std::ptr::null_mut()
    } else {
        p.cast()
    }
}

#[cfg(not(target_os = "linux"))]
fn map(_: usize) -> *mut u8 {
    unreachable!("nothing is mapped off Linux")
}

#[cfg(not(target_os = "linux"))]
unsafe fn unmap(_: *mut u8, _: usize) {
    unreachable!("nothing is mapped off Linux")
}

#[cfg(not(target_os = "linux"))]
unsafe fn remap(_: *mut u8, _: usize, _: usize) -> *mut u8 {
    unreachable!("nothing is mapped off Linux")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Allocates `size` bytes, fills them with a pattern, resizes the block through each
    /// `next` size and checks that the pattern survives every move; frees the block.
    fn fill_and_resize(align: usize, size: usize, next: &[usize]) {
        let pattern = |i: usize| (i.wrapping_mul(31) % 251) as u8;
        let mut layout = Layout::from_size_align(size, align).unwrap();
        // SAFETY: each block is used within its size and freed once with its layout.
        unsafe {
            let mut p = LargeBlocks.alloc(layout);
            assert!(!p.is_null());
            assert_eq!(p as usize % align, 0);
            for i in 0..size {
                *p.add(i) = pattern(i);
            }
            for &new_size in next {
                p = LargeBlocks.realloc(p, layout, new_size);
                assert!(!p.is_null());
                assert_eq!(p as usize % align, 0);
                let kept = layout.size().min(new_size);
                assert!(
                    (0..kept).all(|i| *p.add(i) == pattern(i)),
                    "{size} -> {new_size}"
                );
                for i in kept..new_size {
                    *p.add(i) = pattern(i);
                }
                layout = Layout::from_size_align(new_size, align).unwrap();
            }
            LargeBlocks.dealloc(p, layout);
        }
    }

    #[test]
    fn blocks_keep_their_contents_across_every_resize() {
        let (small, large) = (1000, 3 * LARGE_BLOCK + 5);
        for align in [1, 8, 64, 4096, 8192] {
            // small → small, small → large → larger → smaller but large → small, the threshold
            // itself and one byte below it.
            fill_and_resize(
                align,
                small,
                &[2 * small, large, 2 * large, LARGE_BLOCK, small],
            );
            fill_and_resize(align, LARGE_BLOCK - 1, &[LARGE_BLOCK, LARGE_BLOCK - 1]);
        }
    }

    #[test]
    fn zeroed_blocks_are_zero_on_either_side_of_the_threshold() {
        for size in [100, LARGE_BLOCK, 2 * LARGE_BLOCK + 3] {
            let layout = Layout::from_size_align(size, 8).unwrap();
            // SAFETY: the block is read within its size and freed once with its layout.
            unsafe {
                let p = LargeBlocks.alloc_zeroed(layout);
                assert!(!p.is_null());
                assert!((0..size).all(|i| *p.add(i) == 0), "{size} bytes");
                LargeBlocks.dealloc(p, layout);
            }
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn large_blocks_are_mapped_and_small_ones_are_not() {
        assert!(mapped(Layout::from_size_align(LARGE_BLOCK, 8).unwrap()));
        assert!(!mapped(
            Layout::from_size_align(LARGE_BLOCK - 1, 8).unwrap()
        ));
        // An alignment a page does not guarantee stays with the system allocator.
        assert!(!mapped(Layout::from_size_align(LARGE_BLOCK, 8192).unwrap()));
    }
}
