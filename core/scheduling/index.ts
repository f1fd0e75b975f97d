// Scheduling primitives shared by the packing core, disruption planning and the API layer.
export * from './quantity';
export * from './resources';
export * from './podrequests';
export * from './labels';
export * from './requirement';
export * from './requirements';
export * from './taints';
