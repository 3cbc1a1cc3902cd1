/** The example template and configuration of decisions §5, as a client would send them. */
export function exampleTemplateBody(): Record<string, any> {
  return {
    name: 'Tilt-turn window',
    slug: 'tilt-turn',
    description: 'uPVC, 70 mm profile',
    productCategory: 'window',
    materialTags: ['uPVC'],
    constraints: { minWidth: 400, maxWidth: 3000, minHeight: 400, maxHeight: 2500 },
    components: [
      { id: 'TT', name: 'Tilt-turn sash', type: 'TT', constraints: { minWidth: 300, maxWidth: 1500, minHeight: 400, maxHeight: 2500 } },
      { id: 'F', name: 'Fixed glazing', type: 'F', constraints: { minWidth: 200, maxWidth: 3000, minHeight: 200, maxHeight: 2500 } },
    ],
    optionGroups: [
      { id: 'glazing', name: 'Glazing', scope: 'component', required: true, multiple: false },
      { id: 'extras', name: 'Extras', scope: 'product', required: false, multiple: true },
    ],
    options: [
      { id: 'hr2', code: 'HR++', name: 'Double glazing', optionGroup: 'glazing' },
      { id: 'hr3', code: 'HR+++', name: 'Triple glazing', optionGroup: 'glazing' },
      { id: 'screen', code: 'SCR', name: 'Insect screen', optionGroup: 'extras' },
    ],
    materials: [
      { id: 'white', name: 'White', side: 'both' },
      { id: 'ral7016', name: 'Anthracite', side: 'outside' },
    ],
    sections: ['Ground floor', 'First floor'],
    pricingRules: [
      { level: 'template', calculation: 'fixed', amount: 50, description: 'Frame' },
      { level: 'template', calculation: 'tieredArea', tiers: [{ upTo: 1.5, rate: 130 }, { upTo: null, rate: 110 }] },
      { level: 'component', target: 'TT', calculation: 'area', rate: 90 },
      { level: 'component', target: 'TT', calculation: 'perUnit', amount: 80 },
      { level: 'option', target: 'hr3', calculation: 'area', rate: 45 },
      { level: 'option', target: 'screen', calculation: 'perUnit', amount: 35 },
      { level: 'material', target: 'ral7016', calculation: 'runningMetre', rate: 12 },
      { level: 'template', calculation: 'percentage', percent: 5, description: 'Installation', itemType: 'labor' },
    ],
  };
}

export function exampleConfigurationInput(): Record<string, any> {
  return {
    width: 1200,
    height: 1400,
    unitAmount: 1,
    components: [
      { id: 'c1', componentId: 'TT', width: 600, height: 1400, options: ['hr3'] },
      { id: 'c2', componentId: 'F', width: 600, height: 1400, options: ['hr2'] },
    ],
    options: ['screen'],
    insideColorId: 'white',
    outsideColorId: 'ral7016',
    notes: '',
    section: 'Ground floor',
  };
}
