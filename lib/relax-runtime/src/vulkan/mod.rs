//! The Vulkan engine: SPIR-V kernels (`relax_codegen::spirv`) run on a Vulkan device,
//! called from the Relax interpreter through [`NativeKernels`] (`docs/gpu.md`).
//!
//! * [`compile`] opens the Vulkan loader at run time (`ash`'s `loaded` mode, so building
//!   needs no Vulkan development files), picks the first device with a compute queue,
//!   lowers every PrimFunc of the module to one SPIR-V module and makes one compute
//!   pipeline per launch. A PrimFunc the SPIR-V backend cannot handle is listed in
//!   [`VulkanKernels::failed`] and runs in the TIR interpreter. The module is lowered
//!   TIR (`relax_ir::tir_lower`), lowered once by the caller.
//! * A call binds the arguments with the TIR interpreter's own binder (the same checks
//!   and messages; `crate::gpu_host`, shared with the CUDA engine), copies every
//!   parameter tensor into a host-visible storage buffer, gives each root allocation a
//!   zero-filled one, fills the push constants with the
//!   scalar arguments and symbolic dims, records the launches in order with a memory
//!   barrier between them, waits, and copies the parameter buffers back into the tensors.
//!   Grids larger than the device's first dispatch dimension spill into the second.
#![expect(unsafe_code, reason = "Vulkan calls are foreign functions")]

use std::collections::HashMap;
use std::ffi::CString;

use ash::vk;
use relax_codegen::CodegenError;
use relax_codegen::gpu::GpuFunc;
use relax_ir::{Global, Module};

use crate::error::{RunError, RunResult};
use crate::native::NativeKernels;
use crate::scalar::Scalar;
use crate::value::Value;

/// The pipelines of one PrimFunc.
struct FuncPipes {
    gf: GpuFunc,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipelines: Vec<vk::Pipeline>,
}

/// The kernels of a module on a Vulkan device.
pub struct VulkanKernels {
    _entry: ash::Entry,
    instance: ash::Instance,
    device: ash::Device,
    queue: vk::Queue,
    command_pool: vk::CommandPool,
    memory: vk::PhysicalDeviceMemoryProperties,
    max_groups: [u32; 2],
    shader: vk::ShaderModule,
    funcs: HashMap<Global, FuncPipes>,
    /// The device's name.
    pub device_name: String,
    /// PrimFuncs that could not be compiled (they run in the TIR interpreter), and why.
    pub failed: Vec<(Global, CodegenError)>,
}

fn vkerr(what: &str) -> impl Fn(vk::Result) -> String + '_ {
    move |e| format!("Vulkan: {what} failed: {e}")
}

/// Compiles the kernels of `m` for the first Vulkan device and calls `run` with them.
pub fn compile<T>(m: &Module, run: impl FnOnce(&VulkanKernels) -> T) -> Result<T, String> {
    let k = VulkanKernels::new(m)?;
    Ok(run(&k))
}

impl VulkanKernels {
    fn new(m: &Module) -> Result<VulkanKernels, String> {
        // SAFETY: loading the system's Vulkan loader library.
        let entry = unsafe { ash::Entry::load() }
            .map_err(|e| format!("no Vulkan loader (libvulkan.so.1): {e}; install `libvulkan1` and a driver such as `mesa-vulkan-drivers`"))?;
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_1);
        let info = vk::InstanceCreateInfo::default().application_info(&app);
        // SAFETY: a valid create info.
        let instance = unsafe { entry.create_instance(&info, None) }.map_err(vkerr("vkCreateInstance"))?;
        match Self::with_instance(entry, instance.clone(), m) {
            Ok(k) => Ok(k),
            Err(e) => {
                // SAFETY: nothing created from the instance survives.
                unsafe { instance.destroy_instance(None) };
                Err(e)
            }
        }
    }

    fn with_instance(entry: ash::Entry, instance: ash::Instance, m: &Module) -> Result<VulkanKernels, String> {
        // SAFETY: a live instance.
        let pds = unsafe { instance.enumerate_physical_devices() }.map_err(vkerr("vkEnumeratePhysicalDevices"))?;
        let mut pick = None;
        for pd in pds {
            // SAFETY: a device of this instance.
            let qf = unsafe { instance.get_physical_device_queue_family_properties(pd) };
            if let Some(i) = qf.iter().position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE)) {
                pick = Some((pd, i as u32));
                break;
            }
        }
        let (pd, family) = pick.ok_or("no Vulkan device with a compute queue")?;
        // SAFETY: a device of this instance.
        let props = unsafe { instance.get_physical_device_properties(pd) };
        let device_name = props.device_name_as_c_str().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        // SAFETY: as above.
        let feats = unsafe { instance.get_physical_device_features(pd) };
        let enabled = vk::PhysicalDeviceFeatures::default()
            .shader_int64(feats.shader_int64 == vk::TRUE)
            .shader_float64(feats.shader_float64 == vk::TRUE);
        let prio = [1.0f32];
        let qinfo = [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&prio)];
        let dinfo = vk::DeviceCreateInfo::default().queue_create_infos(&qinfo).enabled_features(&enabled);
        // SAFETY: valid create infos for a device of this instance.
        let device = unsafe { instance.create_device(pd, &dinfo, None) }.map_err(vkerr("vkCreateDevice"))?;
        // SAFETY: the queue family exists.
        let queue = unsafe { device.get_device_queue(family, 0) };
        let memory = unsafe { instance.get_physical_device_memory_properties(pd) };
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(family)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: a live device.
        let command_pool =
            unsafe { device.create_command_pool(&pool_info, None) }.map_err(vkerr("vkCreateCommandPool"))?;
        let sm = relax_codegen::spirv::lower_module(m);
        let sinfo = vk::ShaderModuleCreateInfo::default().code(&sm.words);
        // SAFETY: validated SPIR-V words.
        let shader = unsafe { device.create_shader_module(&sinfo, None) }.map_err(vkerr("vkCreateShaderModule"))?;
        let mut k = VulkanKernels {
            _entry: entry,
            instance,
            device,
            queue,
            command_pool,
            memory,
            max_groups: [props.limits.max_compute_work_group_count[0], props.limits.max_compute_work_group_count[1]],
            shader,
            funcs: HashMap::new(),
            device_name,
            failed: sm.failed,
        };
        for gf in sm.funcs {
            let g = gf.global;
            match k.pipelines(gf) {
                Ok(p) => {
                    k.funcs.insert(g, p);
                }
                Err(e) => k.failed.push((g, CodegenError::new(e))),
            }
        }
        Ok(k)
    }

    fn pipelines(&self, gf: GpuFunc) -> Result<FuncPipes, String> {
        let d = &self.device;
        let bindings: Vec<vk::DescriptorSetLayoutBinding> = (0..gf.buffers.len())
            .map(|i| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(i as u32)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let sl_info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
        // SAFETY: a live device and valid create infos, here and below.
        let set_layout =
            unsafe { d.create_descriptor_set_layout(&sl_info, None) }.map_err(vkerr("vkCreateDescriptorSetLayout"))?;
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .offset(0)
            .size(8 * gf.scalars.len() as u32)];
        let layouts = [set_layout];
        let pl_info = vk::PipelineLayoutCreateInfo::default()
            .set_layouts(&layouts)
            .push_constant_ranges(if gf.scalars.is_empty() { &[] } else { &ranges });
        let layout = unsafe { d.create_pipeline_layout(&pl_info, None) }.map_err(vkerr("vkCreatePipelineLayout"))?;
        let mut pipelines = Vec::new();
        for l in &gf.launches {
            let name = CString::new(l.entry.clone()).map_err(|_| "a kernel name holds a NUL byte".to_string())?;
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(self.shader)
                .name(&name);
            let info = [vk::ComputePipelineCreateInfo::default().stage(stage).layout(layout)];
            let p = unsafe { d.create_compute_pipelines(vk::PipelineCache::null(), &info, None) }
                .map_err(|(_, e)| format!("Vulkan: cannot make the pipeline of `{}`: {e}", l.entry))?;
            pipelines.push(p[0]);
        }
        Ok(FuncPipes { gf, set_layout, layout, pipelines })
    }

    /// The number of PrimFuncs with Vulkan kernels.
    pub fn len(&self) -> usize {
        self.funcs.len()
    }

    /// True when no PrimFunc has Vulkan kernels.
    pub fn is_empty(&self) -> bool {
        self.funcs.is_empty()
    }

    fn memory_type(&self, bits: u32) -> Option<u32> {
        let want = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        (0..self.memory.memory_type_count)
            .find(|&i| bits & (1 << i) != 0 && self.memory.memory_types[i as usize].property_flags.contains(want))
    }

    fn run(&self, m: &Module, g: Global, fp: &FuncPipes, args: &[Value]) -> RunResult<Option<Scalar>> {
        let call = crate::gpu_host::prepare(m, g, &fp.gf, args)?;
        let push: Vec<u8> = call.scalars.concat();
        let out = self.dispatch(fp, &call.contents, &push, &call.grids).map_err(RunError::new)?;
        crate::gpu_host::write_back(&fp.gf, args, out);
        Ok(None)
    }

    /// Runs the launches of `fp` on buffers holding `contents`; their contents after.
    fn dispatch(
        &self,
        fp: &FuncPipes,
        contents: &[Vec<u8>],
        push: &[u8],
        grids: &[i64],
    ) -> Result<Vec<Vec<u8>>, String> {
        let d = &self.device;
        let mut bufs: Vec<(vk::Buffer, vk::DeviceMemory, usize)> = Vec::new();
        let result = (|| -> Result<Vec<Vec<u8>>, String> {
            for c in contents {
                let size = c.len().max(4) as u64;
                let info = vk::BufferCreateInfo::default()
                    .size(size)
                    .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                    .sharing_mode(vk::SharingMode::EXCLUSIVE);
                // SAFETY: a live device and valid create infos, here and below; every
                // object made is destroyed before returning.
                let buf = unsafe { d.create_buffer(&info, None) }.map_err(vkerr("vkCreateBuffer"))?;
                let req = unsafe { d.get_buffer_memory_requirements(buf) };
                let Some(mt) = self.memory_type(req.memory_type_bits) else {
                    unsafe { d.destroy_buffer(buf, None) };
                    return Err("Vulkan: no host-visible, coherent memory for a storage buffer".to_string());
                };
                let ainfo = vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(mt);
                let mem = match unsafe { d.allocate_memory(&ainfo, None) } {
                    Ok(m) => m,
                    Err(e) => {
                        unsafe { d.destroy_buffer(buf, None) };
                        return Err(format!("Vulkan: cannot allocate {} bytes: {e}", req.size));
                    }
                };
                bufs.push((buf, mem, c.len()));
                unsafe { d.bind_buffer_memory(buf, mem, 0) }.map_err(vkerr("vkBindBufferMemory"))?;
                if !c.is_empty() {
                    let p = unsafe { d.map_memory(mem, 0, c.len() as u64, vk::MemoryMapFlags::empty()) }
                        .map_err(vkerr("vkMapMemory"))?;
                    // SAFETY: the mapping is at least `c.len()` bytes long.
                    unsafe {
                        std::ptr::copy_nonoverlapping(c.as_ptr(), p.cast::<u8>(), c.len());
                        d.unmap_memory(mem);
                    }
                }
            }
            let sizes = [vk::DescriptorPoolSize::default()
                .ty(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(contents.len().max(1) as u32)];
            let pinfo = vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes);
            let dpool = unsafe { d.create_descriptor_pool(&pinfo, None) }.map_err(vkerr("vkCreateDescriptorPool"))?;
            let r = self.record_and_wait(fp, dpool, &bufs, push, grids);
            unsafe { d.destroy_descriptor_pool(dpool, None) };
            r?;
            let mut out = Vec::new();
            for &(_, mem, len) in &bufs {
                let mut v = vec![0u8; len];
                if len > 0 {
                    let p = unsafe { d.map_memory(mem, 0, len as u64, vk::MemoryMapFlags::empty()) }
                        .map_err(vkerr("vkMapMemory"))?;
                    // SAFETY: the mapping is `len` bytes long.
                    unsafe {
                        std::ptr::copy_nonoverlapping(p.cast::<u8>(), v.as_mut_ptr(), len);
                        d.unmap_memory(mem);
                    }
                }
                out.push(v);
            }
            Ok(out)
        })();
        for (buf, mem, _) in bufs {
            // SAFETY: the device is idle (the fence was waited for) or nothing was submitted.
            unsafe {
                d.destroy_buffer(buf, None);
                d.free_memory(mem, None);
            }
        }
        result
    }

    fn record_and_wait(
        &self,
        fp: &FuncPipes,
        dpool: vk::DescriptorPool,
        bufs: &[(vk::Buffer, vk::DeviceMemory, usize)],
        push: &[u8],
        grids: &[i64],
    ) -> Result<(), String> {
        let d = &self.device;
        let layouts = [fp.set_layout];
        let ainfo = vk::DescriptorSetAllocateInfo::default().descriptor_pool(dpool).set_layouts(&layouts);
        // SAFETY: a live device and valid infos, here and below.
        let set = unsafe { d.allocate_descriptor_sets(&ainfo) }.map_err(vkerr("vkAllocateDescriptorSets"))?[0];
        let infos: Vec<[vk::DescriptorBufferInfo; 1]> = bufs
            .iter()
            .map(|&(b, _, _)| [vk::DescriptorBufferInfo::default().buffer(b).offset(0).range(vk::WHOLE_SIZE)])
            .collect();
        let writes: Vec<vk::WriteDescriptorSet> = infos
            .iter()
            .enumerate()
            .map(|(i, info)| {
                vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(i as u32)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(info)
            })
            .collect();
        unsafe { d.update_descriptor_sets(&writes, &[]) };
        let cinfo = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.command_pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        let cb = unsafe { d.allocate_command_buffers(&cinfo) }.map_err(vkerr("vkAllocateCommandBuffers"))?[0];
        let r = (|| -> Result<(), String> {
            let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            unsafe { d.begin_command_buffer(cb, &begin) }.map_err(vkerr("vkBeginCommandBuffer"))?;
            for (i, (&pipe, &blocks)) in fp.pipelines.iter().zip(grids).enumerate() {
                if blocks <= 0 {
                    continue;
                }
                let x = (blocks as u64).min(u64::from(self.max_groups[0])) as u32;
                let y = (blocks as u64).div_ceil(u64::from(x));
                if y > u64::from(self.max_groups[1]) {
                    return Err(format!(
                        "Vulkan: the grid of `{}` ({blocks} blocks) is too large",
                        fp.gf.launches[i].entry
                    ));
                }
                unsafe {
                    d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipe);
                    d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, fp.layout, 0, &[set], &[]);
                    if !push.is_empty() {
                        d.cmd_push_constants(cb, fp.layout, vk::ShaderStageFlags::COMPUTE, 0, push);
                    }
                    d.cmd_dispatch(cb, x, y as u32, 1);
                    let barrier =
                        vk::MemoryBarrier::default().src_access_mask(vk::AccessFlags::SHADER_WRITE).dst_access_mask(
                            vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::HOST_READ,
                        );
                    d.cmd_pipeline_barrier(
                        cb,
                        vk::PipelineStageFlags::COMPUTE_SHADER,
                        vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::HOST,
                        vk::DependencyFlags::empty(),
                        &[barrier],
                        &[],
                        &[],
                    );
                }
            }
            unsafe { d.end_command_buffer(cb) }.map_err(vkerr("vkEndCommandBuffer"))?;
            let fence =
                unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None) }.map_err(vkerr("vkCreateFence"))?;
            let cbs = [cb];
            let submit = [vk::SubmitInfo::default().command_buffers(&cbs)];
            let r =
                unsafe { d.queue_submit(self.queue, &submit, fence) }.map_err(vkerr("vkQueueSubmit")).and_then(|()| {
                    unsafe { d.wait_for_fences(&[fence], true, u64::MAX) }.map_err(vkerr("vkWaitForFences"))
                });
            unsafe { d.destroy_fence(fence, None) };
            r
        })();
        unsafe { d.free_command_buffers(self.command_pool, &[cb]) };
        r
    }
}

impl NativeKernels for VulkanKernels {
    fn call(&self, m: &Module, g: Global, args: &[Value]) -> Option<RunResult<Option<Scalar>>> {
        let fp = self.funcs.get(&g)?;
        Some(self.run(m, g, fp, args))
    }
}

impl Drop for VulkanKernels {
    fn drop(&mut self) {
        // SAFETY: every object was made from this device and instance; the device is
        // waited for first.
        unsafe {
            let _ = self.device.device_wait_idle();
            for fp in self.funcs.values() {
                for &p in &fp.pipelines {
                    self.device.destroy_pipeline(p, None);
                }
                self.device.destroy_pipeline_layout(fp.layout, None);
                self.device.destroy_descriptor_set_layout(fp.set_layout, None);
            }
            self.device.destroy_shader_module(self.shader, None);
            self.device.destroy_command_pool(self.command_pool, None);
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}
