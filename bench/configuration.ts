/** The example window (a tilt-turn sash beside fixed glazing) at a given width, the two parts sharing it. */
export function windowConfiguration(width = 1200) {
  const left = Math.floor(width / 2);
  return {
    width,
    height: 1400,
    components: [
      { id: 'c1', componentId: 'TT', width: left, height: 1400, options: ['hr3'] },
      { id: 'c2', componentId: 'F', width: width - left, height: 1400, options: ['hr2'] },
    ],
    options: ['screen'],
    insideColorId: 'white',
    outsideColorId: 'ral7016',
  };
}
